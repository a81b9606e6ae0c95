// Helpers shared by the text-layer tests: scratch directories and small vocabulary files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "counterpoint/core/files.h"

namespace counterpoint::test_support {

// A fresh directory under the system temp dir, removed with its content at scope exit.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    auto base = std::filesystem::temp_directory_path() /
                ("counterpoint_text_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(base);
    std::filesystem::create_directories(base);
    path_ = base.string();
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return join_path(path_, name); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string write_lines(const ScratchDir& dir, const std::string& name,
                               const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  write_file_atomic(dir.file(name), text);
  return dir.file(name);
}

// Value of an environment variable naming a resource, or "" when unset/empty.
inline std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace counterpoint::test_support
