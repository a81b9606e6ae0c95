// counterpoint/core/files.h: file helpers shared by the loaders and savers of every layer.
// Reading reports missing files as FileNotFound; writing is atomic (temporary file, fsync,
// rename) so a crash never leaves a half-written file under the final name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace counterpoint {

// Whole file as bytes; FileNotFound if absent, IoError if unreadable.
std::string read_file(const std::string& path);
// Writes `bytes` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& bytes);
bool path_exists(const std::string& path);
// Lowercase hex SHA-256 of bytes / of a file's content.
std::string sha256_hex(const std::string& bytes);
std::string sha256_file(const std::string& path);
// Joins two path components with one '/'.
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace counterpoint
