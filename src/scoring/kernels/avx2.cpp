// AVX2 + FMA + F16C kernels, compiled per function (target attribute) rather than for the
// whole library, so one binary runs everywhere and dispatch.cpp picks them at run time where
// the CPU has them.
#include "finish.h"
#include "kernels.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#define COUNTERPOINT_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace counterpoint::scoring::kernels {
namespace {

// A single accumulator per quantity would make every step wait for the previous add (4
// cycles), which is what held the portable kernels to ~2 floats per cycle; four independent
// accumulators per quantity keep the adders busy so the loads become the limit. Half rows
// are widened in registers by F16C (vcvtph2ps) instead of going through a float buffer.

constexpr std::size_t kLanes = 8;
constexpr std::size_t kChains = 4;

// Lanes [0, n) set, for masked loads of a row's last n < 8 elements.
COUNTERPOINT_AVX2 inline __m256i first_lanes(std::size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

struct FloatRow {
  const float* values;
  COUNTERPOINT_AVX2 __m256 load(std::size_t i) const { return _mm256_loadu_ps(values + i); }
  // Lanes past n read as 0.0 (maskload does not touch memory beyond the row).
  COUNTERPOINT_AVX2 __m256 load_first(std::size_t i, std::size_t n) const {
    return _mm256_maskload_ps(values + i, first_lanes(n));
  }
};

struct HalfRow {
  const std::uint16_t* values;
  COUNTERPOINT_AVX2 __m256 load(std::size_t i) const {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(values + i)));
  }
  COUNTERPOINT_AVX2 __m256 load_first(std::size_t i, std::size_t n) const {
    std::uint16_t padded[kLanes] = {};  // +0.0 in half
    std::memcpy(padded, values + i, n * sizeof(std::uint16_t));
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(padded)));
  }
};

COUNTERPOINT_AVX2 inline double sum_as_double(__m256 v) {
  const __m256d wide = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                                     _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  const __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(wide), _mm256_extractf128_pd(wide, 1));
  return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
}

COUNTERPOINT_AVX2 inline __m256 sum_chains(const __m256 (&chains)[kChains]) {
  return _mm256_add_ps(_mm256_add_ps(chains[0], chains[1]), _mm256_add_ps(chains[2], chains[3]));
}

template <bool kWantL1, bool kWantL4>
struct NormChains {
  __m256 l1[kChains], l2[kChains], l4[kChains];

  COUNTERPOINT_AVX2 NormChains() {
    for (std::size_t j = 0; j < kChains; ++j) l1[j] = l2[j] = l4[j] = _mm256_setzero_ps();
  }
  COUNTERPOINT_AVX2 void add(std::size_t chain, __m256 x) {
    if (kWantL1) l1[chain] = _mm256_add_ps(l1[chain], _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x));
    if (kWantL4) {
      const __m256 x2 = _mm256_mul_ps(x, x);
      l2[chain] = _mm256_add_ps(l2[chain], x2);
      l4[chain] = _mm256_fmadd_ps(x2, x2, l4[chain]);
    } else {
      l2[chain] = _mm256_fmadd_ps(x, x, l2[chain]);
    }
  }
  COUNTERPOINT_AVX2 void flush_into(DifferenceNorms& norms) const {
    if (kWantL1) norms.l1 += sum_as_double(sum_chains(l1));
    norms.l2sq += sum_as_double(sum_chains(l2));
    if (kWantL4) norms.l4 += sum_as_double(sum_chains(l4));
  }
};

template <bool kWantL1, bool kWantL4, typename Row>
COUNTERPOINT_AVX2 DifferenceNorms difference_norms(const float* q, Row c, std::size_t d) {
  const FloatRow query{q};
  DifferenceNorms norms;
  for (std::size_t start = 0; start < d; start += kBlock) {
    const std::size_t end = std::min(d, start + kBlock);
    NormChains<kWantL1, kWantL4> chains;
    std::size_t i = start;
    for (; i + kChains * kLanes <= end; i += kChains * kLanes) {
      for (std::size_t j = 0; j < kChains; ++j) {
        const std::size_t at = i + j * kLanes;
        chains.add(j, _mm256_sub_ps(query.load(at), c.load(at)));
      }
    }
    for (std::size_t j = 0; i + kLanes <= end; i += kLanes, ++j) {
      chains.add(j, _mm256_sub_ps(query.load(i), c.load(i)));
    }
    if (i < end) {
      chains.add(kChains - 1, _mm256_sub_ps(query.load_first(i, end - i), c.load_first(i, end - i)));
    }
    chains.flush_into(norms);
  }
  return norms;
}

template <bool kWantL1, bool kWantL4>
COUNTERPOINT_AVX2 DifferenceNorms difference_norms_f32(const float* q, const float* c, std::size_t d) {
  return difference_norms<kWantL1, kWantL4>(q, FloatRow{c}, d);
}

template <bool kWantL1, bool kWantL4>
COUNTERPOINT_AVX2 DifferenceNorms difference_norms_f16(const float* q, const std::uint16_t* c,
                                                       std::size_t d) {
  return difference_norms<kWantL1, kWantL4>(q, HalfRow{c}, d);
}

struct DotChains {
  __m256 dot[kChains], sq[kChains];

  COUNTERPOINT_AVX2 DotChains() {
    for (std::size_t j = 0; j < kChains; ++j) dot[j] = sq[j] = _mm256_setzero_ps();
  }
  COUNTERPOINT_AVX2 void add(std::size_t chain, __m256 q, __m256 c) {
    dot[chain] = _mm256_fmadd_ps(q, c, dot[chain]);
    sq[chain] = _mm256_fmadd_ps(c, c, sq[chain]);
  }
};

COUNTERPOINT_AVX2 DotAndNorm dot_and_norm(const float* q, const float* c, std::size_t d) {
  const FloatRow query{q}, candidate{c};
  DotAndNorm result;
  for (std::size_t start = 0; start < d; start += kBlock) {
    const std::size_t end = std::min(d, start + kBlock);
    DotChains chains;
    std::size_t i = start;
    for (; i + kChains * kLanes <= end; i += kChains * kLanes) {
      for (std::size_t j = 0; j < kChains; ++j) {
        const std::size_t at = i + j * kLanes;
        chains.add(j, query.load(at), candidate.load(at));
      }
    }
    for (std::size_t j = 0; i + kLanes <= end; i += kLanes, ++j) {
      chains.add(j, query.load(i), candidate.load(i));
    }
    if (i < end) {
      chains.add(kChains - 1, query.load_first(i, end - i), candidate.load_first(i, end - i));
    }
    result.dot += sum_as_double(sum_chains(chains.dot));
    result.norm_sq += sum_as_double(sum_chains(chains.sq));
  }
  return result;
}

COUNTERPOINT_AVX2 void decode_half_row(const std::uint16_t* src, std::size_t n, float* dst) {
  const HalfRow row{src};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(dst + i, row.load(i));
  if (i < n) _mm256_maskstore_ps(dst + i, first_lanes(n - i), row.load_first(i, n - i));
}


// Inner products of one query with n rows, one row at a time with four accumulators (32 floats a
// step), so the row is read as one sequential stream: interleaving four rows (a query load feeding
// four FMAs) measured 2-3x slower here, in cache (8,565 x 384) and out of it (300k x 384), as the
// hardware prefetcher follows one stream per row. Sums stay in float, as FAISS's and BLAS's do.
COUNTERPOINT_AVX2 inline float sum_lanes(__m256 v) {
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

COUNTERPOINT_AVX2 void inner_products(const float* q, const float* rows, std::size_t n, std::size_t d, float* out) {
  for (std::size_t r = 0; r < n; ++r) {
    const float* c = rows + r * d;
    __m256 chains[kChains];
    for (std::size_t j = 0; j < kChains; ++j) chains[j] = _mm256_setzero_ps();
    std::size_t i = 0;
    for (; i + kChains * kLanes <= d; i += kChains * kLanes) {
      for (std::size_t j = 0; j < kChains; ++j) {
        const std::size_t at = i + j * kLanes;
        chains[j] = _mm256_fmadd_ps(_mm256_loadu_ps(q + at), _mm256_loadu_ps(c + at), chains[j]);
      }
    }
    for (std::size_t j = 0; i + kLanes <= d; i += kLanes, ++j) {
      chains[j] = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(c + i), chains[j]);
    }
    if (i < d) {
      const __m256i mask = first_lanes(d - i);
      chains[kChains - 1] =
          _mm256_fmadd_ps(_mm256_maskload_ps(q + i, mask), _mm256_maskload_ps(c + i, mask), chains[kChains - 1]);
    }
    out[r] = sum_lanes(sum_chains(chains));
  }
}

// finish.h's sparsity_from four rows per instruction: the same double operations in the same
// order (sqrt and division are correctly rounded in both forms), so every score equals the scalar
// one; row by row, the sqrts, divisions and branches were a quarter of stage 2's time.
COUNTERPOINT_AVX2 void finish_rows(const DifferenceNorms* norms, std::size_t n, std::size_t d,
                                   const SparsityOptions& options, float* out) {
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
  const double root_d = std::sqrt(double(d));
  const __m256d sqrt_d = _mm256_set1_pd(root_d), hoyer_denominator = _mm256_set1_pd(root_d - 1.0);
  const __m256d min_l1 = _mm256_set1_pd(root_d * kMinL2), min_l2 = _mm256_set1_pd(kMinL2);
  const float tau = options.scale.value_or(0.0f);
  const __m256d tau_wide = _mm256_set1_pd(double(tau));
  const __m256d guard_threshold = _mm256_set1_pd(double(options.guard_threshold));
  const __m256d guard_value = _mm256_set1_pd(double(options.guard_value));
  const __m256d nan = _mm256_set1_pd(std::numeric_limits<double>::quiet_NaN());
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const DifferenceNorms* r = norms + i;
    const __m256d l1 = _mm256_setr_pd(r[0].l1, r[1].l1, r[2].l1, r[3].l1);
    const __m256d l2sq = _mm256_setr_pd(r[0].l2sq, r[1].l2sq, r[2].l2sq, r[3].l2sq);
    const __m256d l4 = _mm256_setr_pd(r[0].l4, r[1].l4, r[2].l4, r[3].l4);
    const __m256d sum = _mm256_add_pd(_mm256_add_pd(l1, l2sq), l4);
    const __m256d finite = _mm256_cmp_pd(_mm256_sub_pd(sum, sum), zero, _CMP_EQ_OQ);
    const __m256d l2 = _mm256_sqrt_pd(l2sq);
    // _mm256_max_pd(x, floor) is std::max(x, floor) and min/max the clamps for the finite values
    // that reach them (a non-finite row is NaN whatever they give).
    const __m256d l2c = _mm256_max_pd(l2, min_l2);
    __m256d measure;
    if (options.function == Sparsity::kHoyer) {
      const __m256d ratio = _mm256_div_pd(_mm256_max_pd(l1, min_l1), l2c);
      measure = _mm256_div_pd(_mm256_sub_pd(sqrt_d, ratio), hoyer_denominator);
    } else if (options.function == Sparsity::kL2L1) {
      measure = _mm256_div_pd(l2c, _mm256_max_pd(l1, min_l1));
    } else {
      measure = _mm256_div_pd(l4, _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(l2c, l2c), l2c), l2c));
    }
    // Clamped to [0, 1] and rounded to float, as hoyer_from & co. return it, then gated in double.
    measure = _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_min_pd(_mm256_max_pd(measure, zero), one)));
    if (tau > 0.0f) measure = _mm256_mul_pd(_mm256_min_pd(_mm256_div_pd(l2, tau_wide), one), measure);
    if (options.identical_guard) {
      measure = _mm256_blendv_pd(measure, guard_value, _mm256_cmp_pd(l2, guard_threshold, _CMP_LT_OQ));
    }
    _mm_storeu_ps(out + i, _mm256_cvtpd_ps(_mm256_blendv_pd(nan, measure, finite)));
  }
  for (; i < n; ++i) out[i] = sparsity_from(norms[i], d, options);
}

}  // namespace

const Kernels* avx2_kernels() {
  static constexpr Kernels kTable{difference_norms_f32<true, false>, difference_norms_f32<false, true>,
                                  difference_norms_f16<true, false>, difference_norms_f16<false, true>,
                                  dot_and_norm,                      decode_half_row,
                                  inner_products,                    finish_rows};
  return &kTable;
}

}  // namespace counterpoint::scoring::kernels

#else

namespace counterpoint::scoring::kernels {
const Kernels* avx2_kernels() { return nullptr; }
}  // namespace counterpoint::scoring::kernels

#endif
