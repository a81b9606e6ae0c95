// The kernel tables' block forms: finish_rows (a block of rows' norms -> their sparsity scores, the
// AVX2 table four rows per instruction) must equal the scalar formula the portable table runs row
// by row, and inner_products (stage 1's exact scan) must give each row's inner product. The AVX2
// checks are skipped on CPUs without AVX2 + FMA + F16C.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "counterpoint/scoring/cosine.h"
#include "counterpoint/scoring/kernel_isa.h"
#include "kernels/finish.h"
#include "kernels/kernels.h"

namespace counterpoint::scoring {
namespace {

using kernels::DifferenceNorms;

// Norms of real differences (so l1, l2 and l4 are consistent), plus the cases the finishing code
// branches on: zero and near-zero differences (guard, clamps), overflowed and NaN sums.
std::vector<DifferenceNorms> norms_of_differences(std::size_t d, std::size_t rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> scale(-9.0f, 1.0f);
  std::vector<DifferenceNorms> out;
  std::vector<float> x(d), zero(d, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    const float s = std::pow(10.0f, scale(rng));  // |x| from 1e-9 to 10: below and above every threshold
    const bool sparse = r % 3 == 0;
    for (std::size_t i = 0; i < d; ++i) x[i] = (sparse && i % 7 != 0) ? 0.0f : s * normal(rng);
    out.push_back(kernels::all_norms(x.data(), zero.data(), d));
  }
  out.push_back({0.0, 0.0, 0.0});
  out.push_back({std::numeric_limits<double>::infinity(), 1.0, 1.0});
  out.push_back({1.0, std::numeric_limits<double>::quiet_NaN(), 1.0});
  out.push_back({1.0, 1.0, std::numeric_limits<double>::infinity()});
  out.push_back({1e-7, 1e-14, 1e-28});
  return out;
}

std::vector<SparsityOptions> every_option_set() {
  std::vector<SparsityOptions> all;
  for (Sparsity f : {Sparsity::kHoyer, Sparsity::kL2L1, Sparsity::kKappa4}) {
    for (bool guard : {true, false}) {
      for (float tau : {0.0f, 0.15f, 3.0f}) {
        SparsityOptions o;
        o.function = f;
        o.identical_guard = guard;
        if (tau > 0.0f) o.scale = tau;
        all.push_back(o);
      }
    }
  }
  return all;
}

TEST(FinishRows, Avx2BlockEqualsTheScalarFormulaRowByRow) {
  if (!kernel_isa_available(KernelIsa::kAvx2)) GTEST_SKIP() << "CPU lacks avx2";
  const auto avx2 = kernels::avx2_kernels()->finish_rows;
  const auto portable = kernels::portable_kernels().finish_rows;
  for (std::size_t d : {std::size_t(2), std::size_t(9), std::size_t(384)}) {
    const std::vector<DifferenceNorms> norms = norms_of_differences(d, 61, unsigned(d));
    for (const SparsityOptions& options : every_option_set()) {
      // Every count up to a few blocks of four, so the scalar tail runs too.
      for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(4), std::size_t(7), norms.size()}) {
        std::vector<float> fast(n), scalar(n);
        avx2(norms.data() + norms.size() - n, n, d, options, fast.data());
        portable(norms.data() + norms.size() - n, n, d, options, scalar.data());
        for (std::size_t i = 0; i < n; ++i) {
          const float expected = kernels::sparsity_from(norms[norms.size() - n + i], d, options);
          EXPECT_EQ(std::isnan(scalar[i]), std::isnan(expected));
          if (std::isnan(expected)) {
            EXPECT_TRUE(std::isnan(fast[i])) << "row " << i << " d " << d;
          } else {
            EXPECT_EQ(scalar[i], expected);
            EXPECT_NEAR(fast[i], expected, 1e-6) << to_string(options.function) << " row " << i << " d " << d;
          }
        }
      }
    }
  }
}

TEST(InnerProducts, EveryKernelSetGivesEachRowsInnerProduct) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const KernelIsa chosen = kernel_isa();
  for (KernelIsa isa : {KernelIsa::kPortable, KernelIsa::kAvx2}) {
    if (!kernel_isa_available(isa)) continue;
    set_kernel_isa(isa);
    // Widths around the 8 and 16-float steps; row counts around the 4-row passes.
    for (std::size_t d : {std::size_t(1), std::size_t(7), std::size_t(16), std::size_t(23), std::size_t(384)}) {
      for (std::size_t n : {std::size_t(1), std::size_t(4), std::size_t(6), std::size_t(37)}) {
        std::vector<float> q(d), rows(n * d), out(n);
        for (float& v : q) v = normal(rng);
        for (float& v : rows) v = normal(rng);
        inner_products(q.data(), rows.data(), n, d, out.data());
        for (std::size_t r = 0; r < n; ++r) {
          double expected = 0.0, magnitude = 0.0;
          for (std::size_t i = 0; i < d; ++i) {
            expected += double(q[i]) * rows[r * d + i];
            magnitude += std::fabs(double(q[i]) * rows[r * d + i]);
          }
          EXPECT_NEAR(out[r], expected, 1e-6 * magnitude + 1e-7) << to_string(isa) << " d " << d << " row " << r;
        }
      }
    }
  }
  set_kernel_isa(chosen);
}

}  // namespace
}  // namespace counterpoint::scoring
