// Internal to the scoring layer: a row's sparsity score from its difference norms, the scalar
// formula every path shares. sparsity.cpp's scalar measures use it row by row; the kernel tables'
// finish_rows apply it to a block of rows (avx2.cpp four rows per instruction, with the same
// operations in the same order, so the scores come out the same bit for bit).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/scoring/sparsity.h"
#include "kernels.h"

namespace counterpoint::scoring::kernels {

constexpr double kMinL2 = 1e-6;

inline double clamped_l1(double l1, std::size_t d) { return std::max(l1, std::sqrt(double(d)) * kMinL2); }
inline double clamped_l2(double l2sq) { return std::max(std::sqrt(l2sq), kMinL2); }

// std::clamp and std::max keep NaN, so non-finite input still shows up in the result.
inline float hoyer_from(const DifferenceNorms& n, std::size_t d) {
  const double sqrt_d = std::sqrt(double(d));
  const double ratio = clamped_l1(n.l1, d) / clamped_l2(n.l2sq);
  return float(std::clamp((sqrt_d - ratio) / (sqrt_d - 1.0), 0.0, 1.0));
}
inline float l2_l1_from(const DifferenceNorms& n, std::size_t d) {
  return float(std::clamp(clamped_l2(n.l2sq) / clamped_l1(n.l1, d), 0.0, 1.0));
}
inline float kappa4_from(const DifferenceNorms& n) {
  const double l2 = clamped_l2(n.l2sq);
  return float(std::clamp(n.l4 / (l2 * l2 * l2 * l2), 0.0, 1.0));
}

// min(1, |x|_2 / tau), 1 without a gate.
inline double magnitude_gate(const DifferenceNorms& n, const SparsityOptions& options) {
  const float tau = options.scale.value_or(0.0f);
  return tau > 0.0f ? std::min(1.0, std::sqrt(n.l2sq) / double(tau)) : 1.0;
}

// The score of one row: NaN for an overflowed sum (which would otherwise turn into a plausible
// clamped value), the guard value for a (near-)identical pair, else gate * measure.
inline float sparsity_from(const DifferenceNorms& n, std::size_t d, const SparsityOptions& options) {
  if (!std::isfinite(n.l1 + n.l2sq + n.l4)) return std::numeric_limits<float>::quiet_NaN();
  if (options.identical_guard && std::sqrt(n.l2sq) < double(options.guard_threshold)) {
    return options.guard_value;
  }
  const double gate = magnitude_gate(n, options);
  switch (options.function) {
    case Sparsity::kHoyer: return float(gate * hoyer_from(n, d));
    case Sparsity::kL2L1: return float(gate * l2_l1_from(n, d));
    case Sparsity::kKappa4: return float(gate * kappa4_from(n));
  }
  throw InvalidArgument("sparsity: unknown Sparsity value " + std::to_string(static_cast<int>(options.function)));
}

}  // namespace counterpoint::scoring::kernels
