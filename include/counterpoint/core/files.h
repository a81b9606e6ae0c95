// counterpoint/core/files.h: file helpers shared by the loaders and savers of every layer.
// Reading reports missing files as FileNotFound; writing is atomic (temporary file, fsync,
// rename) so a crash never leaves a half-written file under the final name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace counterpoint {

// Limits on what the library reads, checked before a byte is read: JSON documents (model
// manifests, index headers, verifier and checkpoint descriptions, vocabularies) and every other
// file (TorchScript networks, weights, corpora, qrels, runs). The second is far above any model
// this library runs (all-MiniLM-L6-v2 is 90 MB) and below what a 24 GB machine can hold.
inline constexpr std::uint64_t kMaxDocumentBytes = std::uint64_t(64) << 20;  // 64 MiB
inline constexpr std::uint64_t kMaxFileBytes = std::uint64_t(16) << 30;      // 16 GiB

// The size of `path`, which must be a regular file (after following links) of at most max_bytes:
// FileNotFound if absent, InvalidArgument naming what it is instead (a directory, a FIFO, a
// device such as /dev/zero) or its size and the limit. Never opens the file, so a FIFO cannot
// block it.
std::uint64_t require_regular_file(const std::string& path, std::uint64_t max_bytes = kMaxFileBytes);
// Whole file as bytes, after the checks of require_regular_file (made again on the opened
// descriptor); IoError if unreadable.
std::string read_file(const std::string& path, std::uint64_t max_bytes = kMaxFileBytes);
// Writes `bytes` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& bytes);
bool path_exists(const std::string& path);
// Lowercase hex SHA-256 of bytes / of a file's content.
std::string sha256_hex(const std::string& bytes);
std::string sha256_file(const std::string& path);
// Joins two path components with one '/'.
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace counterpoint
