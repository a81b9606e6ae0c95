#include "counterpoint/scoring/pooled.h"

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "counterpoint/core/errors.h"

// The AVX2 kernels are compiled per function (target attribute) rather than for the whole
// library, so one binary runs everywhere and picks them at run time where the CPU has them.
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define COUNTERPOINT_HAVE_AVX2_KERNELS 1
#include <immintrin.h>
#define COUNTERPOINT_AVX2 __attribute__((target("avx2,fma,f16c")))
#else
#define COUNTERPOINT_HAVE_AVX2_KERNELS 0
#endif

namespace counterpoint::scoring {
namespace {

// Both kernel sets sum each quantity in float accumulators (8 lanes here, 4 x 8 in AVX2)
// and flush them into double every kBlock elements, so rounding error stays at float
// epsilon times kBlock / lanes rather than growing with the embedding width.
constexpr std::size_t kBlock = 256;

struct DifferenceNorms {
  double l1 = 0.0;    // sum |x_i|
  double l2sq = 0.0;  // sum x_i^2
  double l4 = 0.0;    // sum x_i^4
};

struct DotAndNorm {
  double dot = 0.0;
  double norm_sq = 0.0;  // of the candidate
};

// ---- portable kernels: Eigen packets (SSE2 on a baseline x86-64 build) ----------------

namespace portable {

constexpr Eigen::Index kLanes = 8;
using Lanes = Eigen::Array<float, kLanes, 1>;
using LanesMap = Eigen::Map<const Lanes>;

// Adds the norms of q - c over n <= kBlock elements.
template <bool kWantL1, bool kWantL4>
void add_block_norms(const float* q, const float* c, std::size_t n, DifferenceNorms& norms) {
  Lanes l1 = Lanes::Zero(), l2 = Lanes::Zero(), l4 = Lanes::Zero();
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Lanes x = LanesMap(q + i) - LanesMap(c + i);
    const Lanes x2 = x * x;
    if (kWantL1) l1 += x.abs();
    l2 += x2;
    if (kWantL4) l4 += x2 * x2;
  }
  for (Eigen::Index k = 0; i < n; ++i, ++k) {
    const float x = q[i] - c[i];
    if (kWantL1) l1[k] += std::fabs(x);
    l2[k] += x * x;
    if (kWantL4) l4[k] += x * x * x * x;
  }
  norms.l1 += l1.cast<double>().sum();
  norms.l2sq += l2.cast<double>().sum();
  norms.l4 += l4.cast<double>().sum();
}

template <bool kWantL1, bool kWantL4>
DifferenceNorms difference_norms(const float* q, const float* c, std::size_t d) {
  DifferenceNorms norms;
  for (std::size_t start = 0; start < d; start += kBlock) {
    add_block_norms<kWantL1, kWantL4>(q + start, c + start, std::min(kBlock, d - start), norms);
  }
  return norms;
}

void decode_half_row(const std::uint16_t* src, std::size_t n, float* dst);

// Decodes one block at a time into the stack, so the result equals difference_norms on the
// decoded row exactly and no row-sized buffer is needed.
template <bool kWantL1, bool kWantL4>
DifferenceNorms difference_norms_f16(const float* q, const std::uint16_t* c, std::size_t d) {
  DifferenceNorms norms;
  float decoded[kBlock];
  for (std::size_t start = 0; start < d; start += kBlock) {
    const std::size_t n = std::min(kBlock, d - start);
    decode_half_row(c + start, n, decoded);
    add_block_norms<kWantL1, kWantL4>(q + start, decoded, n, norms);
  }
  return norms;
}

DotAndNorm dot_and_norm(const float* q, const float* c, std::size_t d) {
  DotAndNorm result;
  for (std::size_t start = 0; start < d; start += kBlock) {
    const std::size_t end = std::min(d, start + kBlock);
    Lanes dot = Lanes::Zero(), sq = Lanes::Zero();
    std::size_t i = start;
    for (; i + kLanes <= end; i += kLanes) {
      const Lanes cv = LanesMap(c + i);
      dot += LanesMap(q + i) * cv;
      sq += cv * cv;
    }
    for (Eigen::Index k = 0; i < end; ++i, ++k) {
      dot[k] += q[i] * c[i];
      sq[k] += c[i] * c[i];
    }
    result.dot += dot.cast<double>().sum();
    result.norm_sq += sq.cast<double>().sum();
  }
  return result;
}

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Branch-free binary16 -> binary32 for whole rows (the loop vectorises; Eigen::half converts
// one value at a time without F16C). The half's exponent and mantissa, shifted into a float,
// read as a float 2^112 times too small, subnormals included, so one exact multiplication
// rebiases them; only Inf/NaN need their exponent set by hand. Checked against half_to_float
// for every bit pattern.
void decode_half_row(const std::uint16_t* src, std::size_t n, float* dst) {
  constexpr std::int32_t kInfOrNan = 0x7C00 << 13;
  const float rebias = 0x1p112f;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t h = src[i];
    const std::uint32_t magnitude = (h & 0x7FFFu) << 13;
    const std::uint32_t finite = float_bits(bits_float(magnitude) * rebias);
    const std::uint32_t special = magnitude | 0x7F800000u;
    // A mask instead of ?: keeps the loop free of branches (magnitude < 2^31: signed compare).
    const std::uint32_t is_special =
        0u - static_cast<std::uint32_t>(static_cast<std::int32_t>(magnitude) >= kInfOrNan);
    const std::uint32_t bits = (special & is_special) | (finite & ~is_special);
    dst[i] = bits_float(bits | ((h & 0x8000u) << 16));
  }
}

}  // namespace portable

#if COUNTERPOINT_HAVE_AVX2_KERNELS
// ---- AVX2 + FMA + F16C kernels --------------------------------------------------------
//
// A single accumulator per quantity would make every step wait for the previous add (4
// cycles), which is what held the portable kernels to ~2 floats per cycle; four independent
// accumulators per quantity keep the adders busy so the loads become the limit. Half rows
// are widened in registers by F16C (vcvtph2ps) instead of going through a float buffer.
namespace avx2 {

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

}  // namespace avx2
#endif  // COUNTERPOINT_HAVE_AVX2_KERNELS

// ---- selection --------------------------------------------------------------------------

template <typename Element>
using NormsKernel = DifferenceNorms (*)(const float* q, const Element* c, std::size_t d);

struct Kernels {
  NormsKernel<float> l1_l2, l2_l4;
  NormsKernel<std::uint16_t> l1_l2_f16, l2_l4_f16;
  DotAndNorm (*dot_and_norm)(const float* q, const float* c, std::size_t d);
  void (*decode_half_row)(const std::uint16_t* src, std::size_t n, float* dst);
};

constexpr Kernels kPortableKernels{
    portable::difference_norms<true, false>,     portable::difference_norms<false, true>,
    portable::difference_norms_f16<true, false>, portable::difference_norms_f16<false, true>,
    portable::dot_and_norm,                      portable::decode_half_row};

#if COUNTERPOINT_HAVE_AVX2_KERNELS
constexpr Kernels kAvx2Kernels{
    avx2::difference_norms_f32<true, false>, avx2::difference_norms_f32<false, true>,
    avx2::difference_norms_f16<true, false>, avx2::difference_norms_f16<false, true>,
    avx2::dot_and_norm,                      avx2::decode_half_row};
#endif

bool cpu_runs(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable: return true;
    case KernelIsa::kAvx2:
#if COUNTERPOINT_HAVE_AVX2_KERNELS
      __builtin_cpu_init();
      // libgcc's avx2 check includes the OS saving the YMM registers (XCR0).
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
#else
      return false;
#endif
  }
  return false;
}

std::atomic<KernelIsa>& selected_isa() {
  static std::atomic<KernelIsa> isa{cpu_runs(KernelIsa::kAvx2) ? KernelIsa::kAvx2 : KernelIsa::kPortable};
  return isa;
}

const Kernels& kernels() {
#if COUNTERPOINT_HAVE_AVX2_KERNELS
  if (selected_isa().load(std::memory_order_relaxed) == KernelIsa::kAvx2) return kAvx2Kernels;
#endif
  return kPortableKernels;
}

constexpr double kMinL2 = 1e-6;

double clamped_l1(double l1, std::size_t d) { return std::max(l1, std::sqrt(double(d)) * kMinL2); }
double clamped_l2(double l2sq) { return std::max(std::sqrt(l2sq), kMinL2); }

// std::clamp and std::max keep NaN, so non-finite input still shows up in the result.
float hoyer_from(const DifferenceNorms& n, std::size_t d) {
  const double sqrt_d = std::sqrt(double(d));
  const double ratio = clamped_l1(n.l1, d) / clamped_l2(n.l2sq);
  return float(std::clamp((sqrt_d - ratio) / (sqrt_d - 1.0), 0.0, 1.0));
}
float l2_l1_from(const DifferenceNorms& n, std::size_t d) {
  return float(std::clamp(clamped_l2(n.l2sq) / clamped_l1(n.l1, d), 0.0, 1.0));
}
float kappa4_from(const DifferenceNorms& n) {
  const double l2 = clamped_l2(n.l2sq);
  return float(std::clamp(n.l4 / (l2 * l2 * l2 * l2), 0.0, 1.0));
}

void require_hoyer_width(std::size_t d) {
  if (d < 2) {
    throw InvalidArgument("hoyer: the embedding width must be at least 2 (sqrt(d) - 1 is the "
                          "denominator), got " + std::to_string(d));
  }
}

void require_options(const SparsityOptions& options) {
  if (!std::isfinite(options.guard_threshold) || options.guard_threshold < 0.0f) {
    throw InvalidArgument("SparsityOptions: guard_threshold must be finite and >= 0, got " +
                          std::to_string(options.guard_threshold));
  }
  if (std::isnan(options.guard_value)) {
    throw InvalidArgument("SparsityOptions: guard_value is NaN");
  }
}

float sparsity_from(const DifferenceNorms& n, std::size_t d, const SparsityOptions& options) {
  // An overflowed sum would otherwise turn into a plausible clamped value.
  if (!std::isfinite(n.l1 + n.l2sq + n.l4)) return std::numeric_limits<float>::quiet_NaN();
  if (options.identical_guard && std::sqrt(n.l2sq) < double(options.guard_threshold)) {
    return options.guard_value;
  }
  switch (options.function) {
    case Sparsity::kHoyer: return hoyer_from(n, d);
    case Sparsity::kL2L1: return l2_l1_from(n, d);
    case Sparsity::kKappa4: return kappa4_from(n);
  }
  throw InvalidArgument("sparsity: unknown Sparsity value " +
                        std::to_string(static_cast<int>(options.function)));
}

// Scores one query row against n contiguous candidate rows of width d (float or half).
template <typename Element>
void sparsity_rows(const float* q, const Element* rows, std::size_t n, std::size_t d,
                   const SparsityOptions& options, NormsKernel<Element> l1_l2,
                   NormsKernel<Element> l2_l4, float* out) {
  switch (options.function) {
    case Sparsity::kHoyer:
    case Sparsity::kL2L1:
      for (std::size_t i = 0; i < n; ++i) out[i] = sparsity_from(l1_l2(q, rows + i * d, d), d, options);
      return;
    case Sparsity::kKappa4:
      for (std::size_t i = 0; i < n; ++i) out[i] = sparsity_from(l2_l4(q, rows + i * d, d), d, options);
      return;
  }
  throw InvalidArgument("sparsity: unknown Sparsity value " +
                        std::to_string(static_cast<int>(options.function)));
}

void require_query_row(MatrixView query, const char* what) {
  if (query.rows != 1) {
    throw InvalidArgument(std::string(what) + ": expected exactly one query row, got " +
                          std::to_string(query.rows));
  }
}

void require_pair(MatrixView query, MatrixView candidates, const char* function) {
  if (query.cols == 0) {
    throw InvalidArgument(std::string(function) + ": embeddings have width 0");
  }
  require_width(candidates, query.cols, (std::string(function) + ": candidates").c_str());
  if (candidates.rows > 0 && candidates.data == nullptr) {
    throw InvalidArgument(std::string(function) + ": candidates have no data pointer");
  }
}

// Validation is done on the results: any NaN or Inf in an input makes the affected score
// non-finite, so the inputs are scanned (to name the culprit) only when a score is.
// Finite inputs whose squares overflow float are reported as such.
void require_finite_scores(const float* scores, std::size_t n, MatrixView query,
                           MatrixView candidates, const char* function) {
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(scores[i])) continue;
    require_finite(query, (std::string(function) + ": query").c_str());
    require_finite(candidates, (std::string(function) + ": candidates").c_str());
    throw InvalidArgument(std::string(function) + ": candidate row " + std::to_string(i) +
                          " overflows float (values too large, |x|^2 > 3.4e38)");
  }
}

}  // namespace

Sparsity parse_sparsity(const std::string& name) {
  if (name == "hoyer") return Sparsity::kHoyer;
  if (name == "l2l1") return Sparsity::kL2L1;
  if (name == "kappa4") return Sparsity::kKappa4;
  throw InvalidArgument("unknown sparsity function '" + name +
                        "' (expected one of: hoyer, l2l1, kappa4)");
}

std::string to_string(Sparsity function) {
  switch (function) {
    case Sparsity::kHoyer: return "hoyer";
    case Sparsity::kL2L1: return "l2l1";
    case Sparsity::kKappa4: return "kappa4";
  }
  throw InvalidArgument("to_string: unknown Sparsity value " +
                        std::to_string(static_cast<int>(function)));
}

namespace {
// The scalar functions compare against a zero vector so they share the pairwise kernels.
DifferenceNorms norms_of(const float* x, std::size_t d, const char* function) {
  if (d == 0) throw InvalidArgument(std::string(function) + ": vector has width 0");
  std::vector<float> zero(d, 0.0f);
  const DifferenceNorms n = portable::difference_norms<true, true>(x, zero.data(), d);
  if (!std::isfinite(n.l1) || !std::isfinite(n.l2sq) || !std::isfinite(n.l4)) {
    require_finite(MatrixView(x, 1, d), function);
    throw InvalidArgument(std::string(function) + ": values too large (|x|^4 overflows float)");
  }
  return n;
}
}  // namespace

float hoyer(const float* x, std::size_t d) {
  require_hoyer_width(d);
  return hoyer_from(norms_of(x, d, "hoyer"), d);
}

float l2_l1(const float* x, std::size_t d) { return l2_l1_from(norms_of(x, d, "l2_l1"), d); }

float kappa4(const float* x, std::size_t d) { return kappa4_from(norms_of(x, d, "kappa4")); }

float sparsity(const float* x, std::size_t d, const SparsityOptions& options) {
  require_options(options);
  if (options.function == Sparsity::kHoyer) require_hoyer_width(d);
  return sparsity_from(norms_of(x, d, "sparsity"), d, options);
}

namespace {

// The float kernels multiply in float: below about 1e-19 per component, products underflow
// (cosine at scale 1e-25 came out 0). Rows whose squared norm is that small are scored again
// with products in double, where every float input is representable.
constexpr double kUnderflowNormSq = 1e-30;

DotAndNorm dot_and_norm_in_double(const float* q, const float* c, std::size_t d) {
  DotAndNorm result;
  for (std::size_t i = 0; i < d; ++i) {
    result.dot += double(q[i]) * double(c[i]);
    result.norm_sq += double(c[i]) * double(c[i]);
  }
  return result;
}

}  // namespace

void cosine_scores(MatrixView query, MatrixView candidates, float* out) {
  require_query_row(query, "cosine_scores");
  require_pair(query, candidates, "cosine_scores");
  const std::size_t d = query.cols;
  const float* q = query.row(0);
  const auto fast = kernels().dot_and_norm;
  double q_norm_sq = fast(q, q, d).norm_sq;
  const bool tiny_query = q_norm_sq < kUnderflowNormSq;
  if (tiny_query) q_norm_sq = dot_and_norm_in_double(q, q, d).norm_sq;
  const double q_norm = std::sqrt(q_norm_sq);
  for (std::size_t i = 0; i < candidates.rows; ++i) {
    DotAndNorm dn = tiny_query ? dot_and_norm_in_double(q, candidates.row(i), d) : fast(q, candidates.row(i), d);
    if (!tiny_query && dn.norm_sq < kUnderflowNormSq) dn = dot_and_norm_in_double(q, candidates.row(i), d);
    if (!std::isfinite(dn.dot + dn.norm_sq + q_norm)) {
      out[i] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const double denominator = q_norm * std::sqrt(dn.norm_sq);
    // A zero-norm side has no direction: cosine 0. NaN/Inf fall through to the check below.
    out[i] = denominator == 0.0 ? 0.0f : float(std::clamp(dn.dot / denominator, -1.0, 1.0));
  }
  require_finite_scores(out, candidates.rows, query, candidates, "cosine_scores");
}

void sparsity_scores(MatrixView query, MatrixView candidates, const SparsityOptions& options,
                     float* out) {
  require_query_row(query, "sparsity_scores");
  require_pair(query, candidates, "sparsity_scores");
  require_options(options);
  if (options.function == Sparsity::kHoyer) require_hoyer_width(query.cols);
  const Kernels& kernel = kernels();
  sparsity_rows(query.row(0), candidates.data, candidates.rows, query.cols, options, kernel.l1_l2,
                kernel.l2_l4, out);
  require_finite_scores(out, candidates.rows, query, candidates, "sparsity_scores");
}

Matrix cosine_matrix(MatrixView queries, MatrixView candidates) {
  require_pair(queries, candidates, "cosine_matrix");
  Matrix result(queries.rows, candidates.rows);
  for (std::size_t r = 0; r < queries.rows; ++r) {
    cosine_scores(MatrixView(queries.row(r), 1, queries.cols), candidates, result.row(r));
  }
  return result;
}

Matrix sparsity_matrix(MatrixView queries, MatrixView candidates, const SparsityOptions& options) {
  require_pair(queries, candidates, "sparsity_matrix");
  Matrix result(queries.rows, candidates.rows);
  for (std::size_t r = 0; r < queries.rows; ++r) {
    sparsity_scores(MatrixView(queries.row(r), 1, queries.cols), candidates, options,
                    result.row(r));
  }
  return result;
}

ScoreComponents combined_scores(MatrixView query_dense, MatrixView candidates_dense,
                                MatrixView query_sparse, MatrixView candidates_sparse, float alpha,
                                const SparsityOptions& options) {
  if (!std::isfinite(alpha)) {
    throw InvalidArgument("combined_scores: alpha must be finite, got " + std::to_string(alpha));
  }
  if (candidates_dense.rows != candidates_sparse.rows) {
    throw InvalidArgument("combined_scores: " + std::to_string(candidates_dense.rows) +
                          " dense candidate rows but " + std::to_string(candidates_sparse.rows) +
                          " sparse candidate rows");
  }
  const std::size_t k = candidates_dense.rows;
  ScoreComponents scores;
  scores.cosine.resize(k);
  scores.sparsity.resize(k);
  scores.final.resize(k);
  cosine_scores(query_dense, candidates_dense, scores.cosine.data());
  sparsity_scores(query_sparse, candidates_sparse, options, scores.sparsity.data());
  for (std::size_t i = 0; i < k; ++i) {
    scores.final[i] = scores.cosine[i] + alpha * scores.sparsity[i];
  }
  return scores;
}

// ---- float16 ----------------------------------------------------------------------------

std::uint16_t float_to_half(float value) {
  return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(value));
}

float half_to_float(std::uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

std::vector<std::uint16_t> to_half(MatrixView m) {
  const std::size_t n = m.rows * m.cols;
  std::vector<std::uint16_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_half(m.data[i]);
  return out;
}

void half_rows_to_float(const std::uint16_t* rows, std::size_t count, float* out) {
  kernels().decode_half_row(rows, count, out);
}

void sparsity_scores_f16(MatrixView query, const std::uint16_t* rows, std::size_t n, std::size_t d,
                         const SparsityOptions& options, float* out) {
  require_query_row(query, "sparsity_scores_f16");
  if (query.cols != d) {
    throw InvalidArgument("sparsity_scores_f16: query width " + std::to_string(query.cols) +
                          " does not match the stored row width " + std::to_string(d));
  }
  if (d == 0) throw InvalidArgument("sparsity_scores_f16: embeddings have width 0");
  if (n > 0 && rows == nullptr) {
    throw InvalidArgument("sparsity_scores_f16: candidate rows pointer is null");
  }
  require_options(options);
  if (options.function == Sparsity::kHoyer) require_hoyer_width(d);
  const Kernels& kernel = kernels();
  sparsity_rows(query.row(0), rows, n, d, options, kernel.l1_l2_f16, kernel.l2_l4_f16, out);
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(out[i])) continue;
    require_finite(query, "sparsity_scores_f16: query");
    std::vector<float> decoded(d);
    kernel.decode_half_row(rows + i * d, d, decoded.data());
    require_finite(MatrixView(decoded.data(), 1, d),
                   ("sparsity_scores_f16: stored candidate row " + std::to_string(i)).c_str());
    throw InvalidArgument("sparsity_scores_f16: candidate row " + std::to_string(i) +
                          " overflows float");
  }
}

KernelIsa kernel_isa() { return selected_isa().load(std::memory_order_relaxed); }

bool kernel_isa_available(KernelIsa isa) { return cpu_runs(isa); }

void set_kernel_isa(KernelIsa isa) {
  if (!cpu_runs(isa)) {
    throw InvalidArgument("set_kernel_isa: this CPU or build cannot run the " + to_string(isa) +
                          " kernels");
  }
  selected_isa().store(isa, std::memory_order_relaxed);
}

std::string to_string(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable: return "portable";
    case KernelIsa::kAvx2: return "avx2";
  }
  throw InvalidArgument("to_string: unknown KernelIsa value " + std::to_string(static_cast<int>(isa)));
}

}  // namespace counterpoint::scoring
