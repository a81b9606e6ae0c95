// Shared by the benchmark programs: reproducible random rows and wall-clock timing.
#pragma once

#include <chrono>

#include "../../tests/cpp/index/index_test_support.h"
#include "counterpoint/core/matrix.h"

namespace counterpoint::bench_support {

// `rows` L2-normalised Gaussian rows of width `cols`, the same for the same seed: the index tests'
// rows, so a benchmark and a test given one seed see the same data.
using index::test_support::random_rows;

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace counterpoint::bench_support
