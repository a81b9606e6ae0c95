// Helpers shared by the libFuzzer targets: a scratch location unique to the fuzzing process
// (libFuzzer may run several jobs side by side) and a check that aborts, so a broken
// invariant is reported as a crash like any memory error.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace counterpoint::fuzz {

inline std::string scratch_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("counterpoint_fuzz_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

inline void write_bytes(const std::string& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
}

[[noreturn]] inline void invariant_broken(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
  std::abort();
}

}  // namespace counterpoint::fuzz

#define FUZZ_CHECK(condition) \
  ((condition) ? (void)0 : ::counterpoint::fuzz::invariant_broken(#condition, __FILE__, __LINE__))
