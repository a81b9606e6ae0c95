// Shared by the benchmark programs: reproducible random rows and wall-clock timing.
#pragma once

#include <chrono>
#include <random>

#include "counterpoint/core/matrix.h"

namespace counterpoint::bench_support {

// `rows` L2-normalised Gaussian rows of width `cols`, the same for the same seed.
inline Matrix unit_rows(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  Matrix m(rows, cols);
  for (float& v : m.values()) v = normal(gen);
  normalize_rows(m);
  return m;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace counterpoint::bench_support
