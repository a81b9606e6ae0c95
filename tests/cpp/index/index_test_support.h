// Test support for the index layer: reproducible random embeddings.
#pragma once

#include <random>

#include "counterpoint/core/matrix.h"

namespace counterpoint::index::test_support {

// `rows` L2-normalised Gaussian rows of width `cols`, the same for the same seed.
inline Matrix random_rows(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  Matrix m(rows, cols);
  for (float& v : m.values()) v = normal(gen);
  normalize_rows(m);
  return m;
}

}  // namespace counterpoint::index::test_support
