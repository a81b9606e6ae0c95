#include "counterpoint/scoring/float16.h"

#include <Eigen/Core>

#include "kernels/kernels.h"

namespace counterpoint::scoring {

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
  kernels::selected().decode_half_row(rows, count, out);
}

}  // namespace counterpoint::scoring
