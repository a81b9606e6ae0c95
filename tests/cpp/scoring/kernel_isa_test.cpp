// The portable and AVX2 kernel sets: each must give the documented results on its own (widths
// that are not a multiple of the vector length, the identical guard, NaN/Inf rejection) and
// the two must agree to float rounding. Every test runs once per kernel set; the AVX2 runs
// are skipped on CPUs without AVX2 + FMA + F16C.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/scoring/pooled.h"

namespace counterpoint::scoring {
namespace {

using ::testing::HasSubstr;

}  // namespace

// Names the parameter in failure messages instead of printing its bytes.
void PrintTo(KernelIsa isa, std::ostream* os) { *os << to_string(isa); }

namespace {

// Widths around the 8-lane vectors, the 32-element unrolled steps and the 256-element blocks.
const std::size_t kWidths[] = {1, 2, 7, 8, 9, 31, 33, 255, 256, 257, 513, 768};
const Sparsity kAllFunctions[] = {Sparsity::kHoyer, Sparsity::kL2L1, Sparsity::kKappa4};

Matrix random_rows(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix m(rows, cols);
  for (float& v : m.values()) v = normal(rng);
  return m;
}

Matrix rounded_to_half(const Matrix& m) {
  Matrix rounded(m.rows(), m.cols());
  for (std::size_t i = 0; i < m.values().size(); ++i) {
    rounded.values()[i] = half_to_float(float_to_half(m.values()[i]));
  }
  return rounded;
}

SparsityOptions options_for(Sparsity f) {
  SparsityOptions options;
  options.function = f;
  return options;
}

// Hoyer needs d >= 2 (its denominator is sqrt(d) - 1).
bool defined_at(Sparsity f, std::size_t d) { return f != Sparsity::kHoyer || d >= 2; }

// Restores the kernel set chosen from the CPU when a test ends.
class KernelIsaTest : public ::testing::TestWithParam<KernelIsa> {
 protected:
  void SetUp() override {
    if (!kernel_isa_available(GetParam())) GTEST_SKIP() << "CPU lacks " << to_string(GetParam());
    set_kernel_isa(GetParam());
  }
  void TearDown() override { set_kernel_isa(default_isa_); }

  const KernelIsa default_isa_ = kernel_isa();
};

TEST_P(KernelIsaTest, SelectionIsReported) { EXPECT_EQ(kernel_isa(), GetParam()); }

TEST_P(KernelIsaTest, HalfKernelEqualsFloatKernelOnRoundedRows) {
  const std::size_t k = 13;
  for (std::size_t d : kWidths) {
    const Matrix q = random_rows(1, d, 1);
    const Matrix c = random_rows(k, d, 2);
    const std::vector<std::uint16_t> stored = to_half(c);
    const Matrix decoded = rounded_to_half(c);
    for (Sparsity f : kAllFunctions) {
      if (!defined_at(f, d)) continue;
      std::vector<float> from_half(k), from_float(k);
      sparsity_scores_f16(q, stored.data(), k, d, options_for(f), from_half.data());
      sparsity_scores(q, decoded, options_for(f), from_float.data());
      for (std::size_t i = 0; i < k; ++i) {
        // The same arithmetic on the same values: equal, which implies the 1e-5 asked for.
        EXPECT_EQ(from_half[i], from_float[i]) << to_string(f) << " d " << d << " row " << i;
      }
    }
  }
}

TEST_P(KernelIsaTest, BulkHalfDecodingMatchesScalarForEveryPattern) {
  std::vector<std::uint16_t> all(65536);
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) all[bits] = static_cast<std::uint16_t>(bits);
  // An odd count exercises the partial last vector.
  std::vector<float> decoded(all.size() - 3);
  half_rows_to_float(all.data(), decoded.size(), decoded.data());
  for (std::uint32_t bits = 0; bits < decoded.size(); ++bits) {
    const float expected = half_to_float(static_cast<std::uint16_t>(bits));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(decoded[bits])) << bits;
    } else {
      EXPECT_EQ(std::signbit(decoded[bits]), std::signbit(expected)) << bits;
      EXPECT_EQ(decoded[bits], expected) << bits;
    }
  }
}

TEST_P(KernelIsaTest, GuardAppliesBelowTheThresholdOnly) {
  for (std::size_t d : {std::size_t(9), std::size_t(513)}) {
    const Matrix q = random_rows(1, d, 3);
    Matrix c(3, d);
    std::copy(q.row(0), q.row(0) + d, c.row(0));                            // identical
    std::copy(q.row(0), q.row(0) + d, c.row(1));
    c(1, d - 1) += 0.9e-3f;                                                 // |x|_2 below 1e-3
    std::copy(q.row(0), q.row(0) + d, c.row(2));
    c(2, d - 1) += 2e-3f;                                                   // above: scored
    for (Sparsity f : kAllFunctions) {
      std::vector<float> out(3), out_f16(3);
      sparsity_scores(q, c, options_for(f), out.data());
      EXPECT_EQ(out[0], -1e9f) << to_string(f) << " d " << d;
      EXPECT_EQ(out[1], -1e9f) << to_string(f) << " d " << d;
      EXPECT_FLOAT_EQ(out[2], 1.0f) << to_string(f) << " d " << d;  // one non-zero coordinate
      // Half storage: the rounded rows give the same answer for the identical row.
      const std::vector<std::uint16_t> stored = to_half(q);
      sparsity_scores_f16(rounded_to_half(q), stored.data(), 1, d, options_for(f), out_f16.data());
      EXPECT_EQ(out_f16[0], -1e9f) << to_string(f) << " d " << d;
    }
  }
}

TEST_P(KernelIsaTest, NonFiniteValuesInTheLastPartialVectorAreRejected) {
  for (std::size_t d : {std::size_t(9), std::size_t(257), std::size_t(513)}) {
    const Matrix q = random_rows(1, d, 4);
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      Matrix c = random_rows(4, d, 5);
      c(2, d - 1) = bad;
      std::vector<float> out(4);
      try {
        cosine_scores(q, c, out.data());
        FAIL() << "expected InvalidArgument";
      } catch (const InvalidArgument& e) {
        EXPECT_THAT(e.what(), HasSubstr("row 2"));
      }
      try {
        sparsity_scores(q, c, {}, out.data());
        FAIL() << "expected InvalidArgument";
      } catch (const InvalidArgument& e) {
        EXPECT_THAT(e.what(), HasSubstr("row 2"));
      }
      std::vector<std::uint16_t> stored = to_half(random_rows(4, d, 6));
      stored[2 * d + d - 1] = float_to_half(bad);
      try {
        sparsity_scores_f16(q, stored.data(), 4, d, {}, out.data());
        FAIL() << "expected InvalidArgument";
      } catch (const InvalidArgument& e) {
        EXPECT_THAT(e.what(), HasSubstr("stored candidate row 2"));
      }
    }
  }
}

std::string isa_name(const ::testing::TestParamInfo<KernelIsa>& info) { return to_string(info.param); }

INSTANTIATE_TEST_SUITE_P(Isa, KernelIsaTest, ::testing::Values(KernelIsa::kPortable, KernelIsa::kAvx2),
                         isa_name);

// Runs `score` under each kernel set and returns the two results.
template <typename Score>
std::pair<std::vector<float>, std::vector<float>> portable_and_avx2(Score score) {
  const KernelIsa default_isa = kernel_isa();
  set_kernel_isa(KernelIsa::kPortable);
  std::vector<float> portable = score();
  set_kernel_isa(KernelIsa::kAvx2);
  std::vector<float> avx2 = score();
  set_kernel_isa(default_isa);
  return {portable, avx2};
}

// 1e-6 relative, with an absolute floor for scores near 0 (a Hoyer of 0.001 is the difference
// of two ratios near sqrt(d), so its relative rounding error is large in both kernel sets).
void expect_close(const std::vector<float>& portable, const std::vector<float>& avx2, const char* what,
                  std::size_t d) {
  ASSERT_EQ(portable.size(), avx2.size());
  for (std::size_t i = 0; i < portable.size(); ++i) {
    const float tolerance = 1e-6f * std::max(1.0f, std::fabs(portable[i]));
    EXPECT_NEAR(avx2[i], portable[i], tolerance) << what << " d " << d << " row " << i;
  }
}

TEST(KernelIsaAgreement, Avx2MatchesPortableToFloatRounding) {
  if (!kernel_isa_available(KernelIsa::kAvx2)) GTEST_SKIP() << "CPU lacks avx2";
  const std::size_t k = 50;
  for (std::size_t d : kWidths) {
    const Matrix q = random_rows(1, d, 7);
    const Matrix c = random_rows(k, d, 8);
    const std::vector<std::uint16_t> stored = to_half(c);
    auto [cos_p, cos_a] = portable_and_avx2([&] {
      std::vector<float> out(k);
      cosine_scores(q, c, out.data());
      return out;
    });
    expect_close(cos_p, cos_a, "cosine", d);
    for (Sparsity f : kAllFunctions) {
      if (!defined_at(f, d)) continue;
      auto [sp_p, sp_a] = portable_and_avx2([&] {
        std::vector<float> out(k);
        sparsity_scores(q, c, options_for(f), out.data());
        return out;
      });
      expect_close(sp_p, sp_a, to_string(f).c_str(), d);
      auto [half_p, half_a] = portable_and_avx2([&] {
        std::vector<float> out(k);
        sparsity_scores_f16(q, stored.data(), k, d, options_for(f), out.data());
        return out;
      });
      expect_close(half_p, half_a, (to_string(f) + " f16").c_str(), d);
    }
  }
}

TEST(KernelIsaAgreement, CombinedScoresAtRerankSize) {
  if (!kernel_isa_available(KernelIsa::kAvx2)) GTEST_SKIP() << "CPU lacks avx2";
  const std::size_t k = 1000, d = 512;
  const Matrix qd = random_rows(1, d, 9), cd = random_rows(k, d, 10);
  const Matrix qs = random_rows(1, d, 11), cs = random_rows(k, d, 12);
  auto [final_p, final_a] = portable_and_avx2(
      [&] { return combined_scores(qd, cd, qs, cs, 0.7f, SparsityOptions{}).final; });
  expect_close(final_p, final_a, "combined", d);
}

TEST(KernelIsaSelection, UnavailableSetsAreRefusedAndNamed) {
  EXPECT_TRUE(kernel_isa_available(KernelIsa::kPortable));
  EXPECT_EQ(to_string(KernelIsa::kPortable), "portable");
  EXPECT_EQ(to_string(KernelIsa::kAvx2), "avx2");
  if (!kernel_isa_available(KernelIsa::kAvx2)) {
    EXPECT_THROW(set_kernel_isa(KernelIsa::kAvx2), InvalidArgument);
  }
}

}  // namespace
}  // namespace counterpoint::scoring
