// Portable kernels: Eigen packets (SSE2 on a baseline x86-64 build, NEON on ARM).
#include <Eigen/Core>
#include <algorithm>
#include <cstring>

#include "finish.h"
#include "kernels.h"

namespace counterpoint::scoring::kernels {
namespace {


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

void inner_products(const float* q, const float* rows, std::size_t n, std::size_t d, float* out) {
  for (std::size_t r = 0; r < n; ++r) {
    const float* c = rows + r * d;
    Lanes dot = Lanes::Zero();
    std::size_t i = 0;
    for (; i + kLanes <= d; i += kLanes) dot += LanesMap(q + i) * LanesMap(c + i);
    for (Eigen::Index k = 0; i < d; ++i, ++k) dot[k] += q[i] * c[i];
    out[r] = dot.sum();
  }
}

void finish_rows(const DifferenceNorms* norms, std::size_t n, std::size_t d, const SparsityOptions& options,
                 float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = sparsity_from(norms[i], d, options);
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

}  // namespace

const Kernels& portable_kernels() {
  static constexpr Kernels kTable{difference_norms<true, false>,     difference_norms<false, true>,
                                  difference_norms_f16<true, false>, difference_norms_f16<false, true>,
                                  dot_and_norm,                      decode_half_row,
                                  inner_products,                    finish_rows};
  return kTable;
}

DifferenceNorms all_norms(const float* q, const float* c, std::size_t d) {
  return difference_norms<true, true>(q, c, d);
}

}  // namespace counterpoint::scoring::kernels
