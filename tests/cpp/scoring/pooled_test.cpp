// Behaviour of the pooled-embedding scores: cosine, Hoyer, l2/l1, kappa4 and their
// combination F = cos + alpha * sparsity, checked against hand-computed values and a plain
// double-precision reference.
#include "counterpoint/scoring/pooled.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "counterpoint/core/errors.h"

namespace counterpoint::scoring {
namespace {

using ::testing::HasSubstr;

Matrix random_matrix(std::size_t rows, std::size_t cols, unsigned seed, double zero_fraction = 0.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Matrix m(rows, cols);
  for (float& v : m.values()) v = uniform(rng) < zero_fraction ? 0.0f : normal(rng);
  return m;
}

// Straightforward double-precision definitions, no clamping needed on non-degenerate data.
struct Reference {
  static double cosine(const float* a, const float* b, std::size_t d) {
    double dot = 0, na = 0, nb = 0;
    for (std::size_t i = 0; i < d; ++i) {
      dot += double(a[i]) * b[i];
      na += double(a[i]) * a[i];
      nb += double(b[i]) * b[i];
    }
    return dot / std::sqrt(na * nb);
  }
  static double measure(Sparsity f, const float* a, const float* b, std::size_t d) {
    double l1 = 0, l2 = 0, l4 = 0;
    for (std::size_t i = 0; i < d; ++i) {
      const double x = double(a[i]) - double(b[i]);
      l1 += std::fabs(x);
      l2 += x * x;
      l4 += x * x * x * x;
    }
    switch (f) {
      case Sparsity::kHoyer: return (std::sqrt(double(d)) - l1 / std::sqrt(l2)) / (std::sqrt(double(d)) - 1);
      case Sparsity::kL2L1: return std::sqrt(l2) / l1;
      case Sparsity::kKappa4: return l4 / (l2 * l2);
    }
    return NAN;
  }
};

const Sparsity kAllFunctions[] = {Sparsity::kHoyer, Sparsity::kL2L1, Sparsity::kKappa4};

SparsityOptions options_for(Sparsity f, bool guard = true) {
  SparsityOptions options;
  options.function = f;
  options.identical_guard = guard;
  return options;
}

float measure(Sparsity f, const std::vector<float>& x) {
  switch (f) {
    case Sparsity::kHoyer: return hoyer(x.data(), x.size());
    case Sparsity::kL2L1: return l2_l1(x.data(), x.size());
    case Sparsity::kKappa4: return kappa4(x.data(), x.size());
  }
  return NAN;
}

TEST(SparsityNames, RoundTripAndRejectUnknown) {
  for (Sparsity f : kAllFunctions) EXPECT_EQ(parse_sparsity(to_string(f)), f);
  EXPECT_EQ(to_string(Sparsity::kHoyer), "hoyer");
  EXPECT_EQ(to_string(Sparsity::kL2L1), "l2l1");
  EXPECT_EQ(to_string(Sparsity::kKappa4), "kappa4");
  try {
    parse_sparsity("Hoyer2");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'Hoyer2'"));
    EXPECT_THAT(e.what(), HasSubstr("hoyer, l2l1, kappa4"));
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'hoyer'?"));
  }
}

TEST(SparsityNames, AreReadInAnyCaseLikeTheOtherEnums) {
  EXPECT_EQ(parse_sparsity("Hoyer"), Sparsity::kHoyer);
  EXPECT_EQ(parse_sparsity("L2L1"), Sparsity::kL2L1);
  EXPECT_EQ(parse_sparsity("KAPPA4"), Sparsity::kKappa4);
}

TEST(ScalarSparsity, OneNonZeroCoordinateIsMaximallySparse) {
  const std::vector<float> x = {0, 0, -3, 0};
  EXPECT_FLOAT_EQ(hoyer(x.data(), 4), 1.0f);
  EXPECT_FLOAT_EQ(l2_l1(x.data(), 4), 1.0f);
  EXPECT_FLOAT_EQ(kappa4(x.data(), 4), 1.0f);
}

TEST(ScalarSparsity, EqualMagnitudesAreMaximallyDense) {
  const std::vector<float> x = {2, -2, 2, -2};
  EXPECT_FLOAT_EQ(hoyer(x.data(), 4), 0.0f);
  EXPECT_FLOAT_EQ(l2_l1(x.data(), 4), 0.5f);   // 1 / sqrt(d)
  EXPECT_FLOAT_EQ(kappa4(x.data(), 4), 0.25f);  // 1 / d
}

TEST(ScalarSparsity, HandComputedThreeFourVector) {
  // |x|_1 = 7, |x|_2 = 5, |x|_4^4 = 81 + 256 = 337.
  const std::vector<float> x = {3, 4, 0, 0};
  EXPECT_FLOAT_EQ(hoyer(x.data(), 4), 0.6f);  // (2 - 7/5) / (2 - 1)
  EXPECT_FLOAT_EQ(l2_l1(x.data(), 4), 5.0f / 7.0f);
  EXPECT_FLOAT_EQ(kappa4(x.data(), 4), 337.0f / 625.0f);
}

TEST(ScalarSparsity, ZeroVectorWithoutGuardUsesTheReferenceClamps) {
  const std::vector<float> zero(16, 0.0f);
  EXPECT_FLOAT_EQ(hoyer(zero.data(), 16), 0.0f);
  EXPECT_FLOAT_EQ(l2_l1(zero.data(), 16), 0.25f);
  EXPECT_FLOAT_EQ(kappa4(zero.data(), 16), 0.0f);
}

TEST(ScalarSparsity, GuardAppliesBelowTheThresholdOnly) {
  std::vector<float> x(8, 0.0f);
  for (Sparsity f : kAllFunctions) {
    x[0] = 0.0f;
    EXPECT_EQ(sparsity(x.data(), 8, options_for(f)), -1e9f) << to_string(f);
    x[0] = 0.5e-3f;
    EXPECT_EQ(sparsity(x.data(), 8, options_for(f)), -1e9f) << to_string(f);
    x[0] = 2e-3f;  // one non-zero coordinate: every measure gives 1
    EXPECT_FLOAT_EQ(sparsity(x.data(), 8, options_for(f)), 1.0f) << to_string(f);
  }
  SparsityOptions custom;
  custom.guard_threshold = 0.1f;
  custom.guard_value = -5.0f;
  x[0] = 0.05f;
  EXPECT_EQ(sparsity(x.data(), 8, custom), -5.0f);
}

TEST(ScalarSparsity, RangeIsZeroToOneOnRandomData) {
  for (double zero_fraction : {0.0, 0.5, 0.95}) {
    const Matrix m = random_matrix(200, 64, 7, zero_fraction);
    for (std::size_t r = 0; r < m.rows(); ++r) {
      const std::vector<float> x(m.row(r), m.row(r) + m.cols());
      for (Sparsity f : kAllFunctions) {
        const float v = measure(f, x);
        EXPECT_GE(v, 0.0f) << to_string(f);
        EXPECT_LE(v, 1.0f) << to_string(f);
      }
    }
  }
}

TEST(ScalarSparsity, ScaleInvariant) {
  const Matrix m = random_matrix(20, 128, 11, 0.3);
  for (std::size_t r = 0; r < m.rows(); ++r) {
    const std::vector<float> x(m.row(r), m.row(r) + m.cols());
    for (float scale : {1e-3f, 7.5f, -40.0f}) {
      std::vector<float> scaled = x;
      for (float& v : scaled) v *= scale;
      for (Sparsity f : kAllFunctions) {
        EXPECT_NEAR(measure(f, scaled), measure(f, x), 1e-6) << to_string(f) << " scale " << scale;
      }
    }
  }
}

TEST(ScalarSparsity, AgreesWithDoubleReference) {
  const Matrix m = random_matrix(50, 768, 3);
  const std::vector<float> zero(768, 0.0f);
  for (std::size_t r = 0; r < m.rows(); ++r) {
    const std::vector<float> x(m.row(r), m.row(r) + m.cols());
    for (Sparsity f : kAllFunctions) {
      EXPECT_NEAR(measure(f, x), Reference::measure(f, x.data(), zero.data(), 768), 1e-5);
    }
  }
}

TEST(ScalarSparsity, RejectsBadInput) {
  std::vector<float> x = {1, 2, 3};
  EXPECT_THROW(hoyer(x.data(), 1), InvalidArgument);  // sqrt(1) - 1 == 0
  EXPECT_THROW(kappa4(x.data(), 0), InvalidArgument);
  x[1] = std::numeric_limits<float>::quiet_NaN();
  for (Sparsity f : kAllFunctions) EXPECT_THROW(measure(f, x), InvalidArgument);
  x[1] = -std::numeric_limits<float>::infinity();
  for (Sparsity f : kAllFunctions) EXPECT_THROW(measure(f, x), InvalidArgument);
  x[1] = 1e30f;  // finite, but its square overflows float
  for (Sparsity f : kAllFunctions) EXPECT_THROW(measure(f, x), InvalidArgument);
  SparsityOptions bad;
  bad.guard_threshold = -1.0f;
  x[1] = 2.0f;
  EXPECT_THROW(sparsity(x.data(), 3, bad), InvalidArgument);
}

TEST(CosineScores, HandComputed) {
  const std::vector<float> q = {1, 0};
  const std::vector<float> c = {2, 0, 0, 3, -1, -1, 0, 0, 3, 4};
  std::vector<float> out(5);
  cosine_scores(MatrixView(q.data(), 1, 2), MatrixView(c.data(), 5, 2), out.data());
  EXPECT_FLOAT_EQ(out[0], 1.0f);
  EXPECT_FLOAT_EQ(out[1], 0.0f);
  EXPECT_FLOAT_EQ(out[2], -0.70710678f);
  EXPECT_FLOAT_EQ(out[3], 0.0f);  // zero-norm candidate
  EXPECT_FLOAT_EQ(out[4], 0.6f);
}

// Squared norms of 1e-25-scaled rows underflow float (cosine came out 0); such rows are scored in
// double, so cosine is the same at every scale a float can hold.
TEST(CosineScores, SameAtEveryScaleAFloatCanHold) {
  const std::vector<float> q = {3, 4, 0, 1}, c = {4, 3, 1, 0};
  std::vector<float> reference(1);
  cosine_scores(MatrixView(q.data(), 1, 4), MatrixView(c.data(), 1, 4), reference.data());
  for (float scale : {1e-38f, 1e-30f, 1e-25f, 1e-20f, 1e-10f, 1.0f, 1e10f, 1e18f}) {
    for (bool scale_query : {true, false}) {
      std::vector<float> qs = q, cs = c;
      for (auto& v : scale_query ? qs : cs) v *= scale;
      std::vector<float> out(1);
      cosine_scores(MatrixView(qs.data(), 1, 4), MatrixView(cs.data(), 1, 4), out.data());
      EXPECT_NEAR(out[0], reference[0], 1e-6) << "scale " << scale << (scale_query ? " on q" : " on c");
    }
  }
}

TEST(SparsityScores, HandComputedWithGuard) {
  const std::vector<float> q = {1, 0, 0, 0};
  const std::vector<float> c = {1, 0, 0, 0,  0, 1, 0, 0,  1, 0.5f, 0.5f, 0.5f};
  std::vector<float> out(3);
  sparsity_scores(MatrixView(q.data(), 1, 4), MatrixView(c.data(), 3, 4), SparsityOptions{},
                  out.data());
  EXPECT_EQ(out[0], -1e9f);                          // identical: guarded
  EXPECT_FLOAT_EQ(out[1], 2.0f - std::sqrt(2.0f));   // x = (1, -1, 0, 0)
  EXPECT_FLOAT_EQ(out[2], 2.0f - std::sqrt(3.0f));   // x = (0, -.5, -.5, -.5)
  sparsity_scores(MatrixView(q.data(), 1, 4), MatrixView(c.data(), 3, 4),
                  options_for(Sparsity::kHoyer, false), out.data());
  EXPECT_FLOAT_EQ(out[0], 0.0f);  // zero difference, guard off
}

TEST(OneToMany, AgreesWithDoubleReference) {
  const std::size_t d = 384, k = 60;
  const Matrix q = random_matrix(1, d, 21);
  Matrix c = random_matrix(k, d, 22, 0.2);
  std::copy(q.row(0), q.row(0) + d, c.row(5));  // an exact duplicate
  std::vector<float> out(k);
  cosine_scores(q, c, out.data());
  for (std::size_t i = 0; i < k; ++i) {
    EXPECT_NEAR(out[i], Reference::cosine(q.row(0), c.row(i), d), 1e-5) << i;
  }
  for (Sparsity f : kAllFunctions) {
    sparsity_scores(q, c, options_for(f), out.data());
    for (std::size_t i = 0; i < k; ++i) {
      if (i == 5) {
        EXPECT_EQ(out[i], -1e9f);
        continue;
      }
      EXPECT_NEAR(out[i], Reference::measure(f, q.row(0), c.row(i), d), 1e-5) << to_string(f) << i;
    }
  }
}

TEST(ManyToMany, AgreesWithDoubleReference) {
  const std::size_t d = 100;  // not a multiple of the kernels' lane count
  const Matrix q = random_matrix(7, d, 31);
  const Matrix c = random_matrix(13, d, 32);
  const Matrix cos = cosine_matrix(q, c);
  ASSERT_EQ(cos.rows(), 7u);
  ASSERT_EQ(cos.cols(), 13u);
  for (std::size_t i = 0; i < 7; ++i) {
    for (std::size_t j = 0; j < 13; ++j) {
      EXPECT_NEAR(cos(i, j), Reference::cosine(q.row(i), c.row(j), d), 1e-5);
    }
  }
  for (Sparsity f : kAllFunctions) {
    const Matrix s = sparsity_matrix(q, c, options_for(f));
    for (std::size_t i = 0; i < 7; ++i) {
      for (std::size_t j = 0; j < 13; ++j) {
        EXPECT_NEAR(s(i, j), Reference::measure(f, q.row(i), c.row(j), d), 1e-5) << to_string(f);
      }
    }
  }
}

TEST(CombinedScores, FinalIsCosinePlusAlphaTimesSparsity) {
  const std::vector<float> qd = {1, 0}, cd = {2, 0, 3, 4};
  const std::vector<float> qs = {1, 0, 0, 0}, cs = {0, 1, 0, 0, 1, 0, 0, 0};
  const ScoreComponents s =
      combined_scores(MatrixView(qd.data(), 1, 2), MatrixView(cd.data(), 2, 2),
                      MatrixView(qs.data(), 1, 4), MatrixView(cs.data(), 2, 4), 2.0f, SparsityOptions{});
  ASSERT_EQ(s.final.size(), 2u);
  EXPECT_FLOAT_EQ(s.cosine[0], 1.0f);
  EXPECT_FLOAT_EQ(s.cosine[1], 0.6f);
  EXPECT_FLOAT_EQ(s.sparsity[0], 2.0f - std::sqrt(2.0f));
  EXPECT_EQ(s.sparsity[1], -1e9f);
  EXPECT_FLOAT_EQ(s.final[0], 1.0f + 2.0f * (2.0f - std::sqrt(2.0f)));
  EXPECT_FLOAT_EQ(s.final[1], 0.6f - 2e9f);
}

TEST(CombinedScores, RejectsMismatchedInputs) {
  const Matrix qd = random_matrix(1, 8, 1), cd = random_matrix(3, 8, 2);
  const Matrix qs = random_matrix(1, 6, 3), cs = random_matrix(3, 6, 4), cs2 = random_matrix(2, 6, 5);
  EXPECT_THROW(combined_scores(qd, cd, qs, cs2, 1.0f, {}), InvalidArgument);
  EXPECT_THROW(combined_scores(qd, cd, qs, cs, NAN, {}), InvalidArgument);
  EXPECT_THROW(combined_scores(qd, cs, qs, cs, 1.0f, {}), InvalidArgument);  // width 8 vs 6
  EXPECT_THROW(combined_scores(cd, cd, qs, cs, 1.0f, {}), InvalidArgument);  // 3 query rows
  EXPECT_NO_THROW(combined_scores(qd, cd, qs, cs, 1.0f, {}));
}

TEST(InputChecks, WidthMismatchNamesBothWidths) {
  const Matrix q = random_matrix(1, 8, 1), c = random_matrix(3, 9, 2);
  std::vector<float> out(3);
  try {
    sparsity_scores(q, c, {}, out.data());
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected width 8, got 9"));
  }
  EXPECT_THROW(cosine_scores(q, c, out.data()), InvalidArgument);
  EXPECT_THROW(cosine_matrix(q, c), InvalidArgument);
  EXPECT_THROW(sparsity_matrix(q, c, {}), InvalidArgument);
}

TEST(InputChecks, NonFiniteValuesAreRejectedWithTheirPosition) {
  const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
  for (float bad : bad_values) {
    for (bool guard : {true, false}) {
      Matrix q = random_matrix(1, 16, 1);
      Matrix c = random_matrix(4, 16, 2);
      std::vector<float> out(4);
      c(2, 9) = bad;
      for (Sparsity f : kAllFunctions) {
        try {
          sparsity_scores(q, c, options_for(f, guard), out.data());
          FAIL() << "expected InvalidArgument for " << bad;
        } catch (const InvalidArgument& e) {
          EXPECT_THAT(e.what(), HasSubstr("candidates: value at row 2, column 9 is not finite"));
        }
      }
      EXPECT_THROW(cosine_scores(q, c, out.data()), InvalidArgument);
      EXPECT_THROW(cosine_matrix(q, c), InvalidArgument);
      // The same bad value on both sides of a difference (Inf - Inf) is still caught.
      q(0, 9) = bad;
      c(2, 9) = 0.5f;
      try {
        sparsity_scores(q, c, options_for(Sparsity::kHoyer, guard), out.data());
        FAIL() << "expected InvalidArgument for " << bad;
      } catch (const InvalidArgument& e) {
        EXPECT_THAT(e.what(), HasSubstr("query: value at row 0, column 9"));
      }
      c(2, 9) = bad;
      EXPECT_THROW(sparsity_scores(q, c, options_for(Sparsity::kHoyer, guard), out.data()),
                   InvalidArgument);
      EXPECT_THROW(cosine_scores(q, c, out.data()), InvalidArgument);
    }
  }
}

TEST(InputChecks, OverflowOfFiniteValuesIsReportedNotClamped) {
  Matrix q = random_matrix(1, 16, 1), c = random_matrix(2, 16, 2);
  c(1, 3) = 3e19f;  // square exceeds FLT_MAX
  std::vector<float> out(2);
  try {
    sparsity_scores(q, c, {}, out.data());
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("candidate row 1 overflows"));
  }
  EXPECT_THROW(cosine_scores(q, c, out.data()), InvalidArgument);
}

// Paper Appendix B: A = e_1, B = (1, 0, eps, ..., eps), C = e_2. A and B are near-duplicates,
// both far from C. Hoyer of the differences says "A contradicts C" and "B contradicts C"
// while "A does not contradict B": the relation is not transitive.
TEST(AppendixB, HoyerIsNotTransitive) {
  const std::size_t d = 1024;
  const float eps = 1.0f / float(d);
  std::vector<float> a(d, 0.0f), b(d, eps), c(d, 0.0f);
  a[0] = 1.0f;
  b[0] = 1.0f;
  b[1] = 0.0f;
  c[1] = 1.0f;
  const auto hoyer_of = [&](const std::vector<float>& x, const std::vector<float>& y) {
    std::vector<float> diff(d);
    for (std::size_t i = 0; i < d; ++i) diff[i] = x[i] - y[i];
    return hoyer(diff.data(), d);
  };
  // |A - C|_1 / |A - C|_2 = sqrt(2); |B - C| ratio = (2 + (d-2) eps) / sqrt(2 + (d-2) eps^2) < 3;
  // |A - B| ratio = sqrt(d - 2).
  const double sqrt_d = std::sqrt(double(d));
  EXPECT_NEAR(hoyer_of(a, c), (sqrt_d - std::sqrt(2.0)) / (sqrt_d - 1), 1e-6);
  EXPECT_GT(hoyer_of(a, c), 0.98f);
  EXPECT_GT(hoyer_of(b, c), 0.96f);
  EXPECT_NEAR(hoyer_of(a, b), (sqrt_d - std::sqrt(double(d - 2))) / (sqrt_d - 1), 1e-6);
  EXPECT_LT(hoyer_of(a, b), 2.0f / float(d));  // O(1/d)
  // Cosine ranks the same triple transitively: A ~ B, and both are orthogonal to C.
  std::vector<float> out(2);
  const std::vector<float> bc = [&] { std::vector<float> m = b; m.insert(m.end(), c.begin(), c.end()); return m; }();
  cosine_scores(MatrixView(a.data(), 1, d), MatrixView(bc.data(), 2, d), out.data());
  EXPECT_GT(out[0], 0.99f);
  EXPECT_NEAR(out[1], 0.0f, 1e-7);
}

// Proposition B.2: for unit vectors, cos(A, C) >= 1 - e and cos(B, C) >= 1 - e imply
// cos(A, B) >= 1 - 4e, since |A - B| <= |A - C| + |C - B| and cos = 1 - |X - Y|^2 / 2.
TEST(AppendixB, CosineIsTransitive) {
  const std::size_t d = 256;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int trial = 0; trial < 50; ++trial) {
    Matrix m(3, d);
    for (std::size_t j = 0; j < d; ++j) {
      const float base = normal(rng);
      m(0, j) = base + 0.05f * normal(rng);
      m(1, j) = base + 0.05f * normal(rng);
      m(2, j) = base;
    }
    const Matrix cos = cosine_matrix(m, m);
    const double e = std::max(1.0 - cos(0, 2), 1.0 - cos(1, 2));
    EXPECT_GE(cos(0, 1), 1.0 - 4.0 * e - 1e-6);
  }
}

}  // namespace
}  // namespace counterpoint::scoring
