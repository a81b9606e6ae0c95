// AVX2 + FMA + F16C kernels, compiled per function (target attribute) rather than for the
// whole library, so one binary runs everywhere and dispatch.cpp picks them at run time where
// the CPU has them.
#include "kernels.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <cstring>

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

}  // namespace

const Kernels* avx2_kernels() {
  static constexpr Kernels kTable{difference_norms_f32<true, false>, difference_norms_f32<false, true>,
                                  difference_norms_f16<true, false>, difference_norms_f16<false, true>,
                                  dot_and_norm,                      decode_half_row};
  return &kTable;
}

}  // namespace counterpoint::scoring::kernels

#else

namespace counterpoint::scoring::kernels {
const Kernels* avx2_kernels() { return nullptr; }
}  // namespace counterpoint::scoring::kernels

#endif
