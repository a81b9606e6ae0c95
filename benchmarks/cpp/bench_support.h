// Shared by the benchmark programs: their "--flag value" arguments, reproducible random rows and
// wall-clock timing.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../../tests/cpp/index/index_test_support.h"
#include "counterpoint/core/matrix.h"

namespace counterpoint::bench_support {

// `rows` L2-normalised Gaussian rows of width `cols`, the same for the same seed: the index tests'
// rows, so a benchmark and a test given one seed see the same data.
using index::test_support::random_rows;

// Reads argv as "--flag value" pairs: set(flag, value) stores one (std::stoul and the like may
// throw on a value they cannot read) and returns false for a flag it does not know. A flag
// without a value, an unknown flag or an unreadable value ends the program with status 2 and a
// message naming `program`; `hint` (may be empty) follows it.
template <class Set>
void parse_flags(const char* program, int argc, char** argv, Set set, const std::string& hint = "") {
  const auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "%s: %s%s\n", program, message.c_str(), hint.empty() ? "" : ("\n" + hint).c_str());
    std::exit(2);
  };
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) fail("flag " + flag + " needs a value");
    bool known = false;
    try {
      known = set(flag, std::string(argv[i + 1]));
    } catch (const std::logic_error&) {  // std::invalid_argument, std::out_of_range
      fail("flag " + flag + ": cannot read '" + argv[i + 1] + "'");
    }
    if (!known) fail("unknown flag " + flag);
  }
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace counterpoint::bench_support
