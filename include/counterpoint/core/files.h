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
// Writes `bytes` to `path` atomically. An existing `path` must be a regular file (see
// require_safe_output): InvalidArgument otherwise, and nothing is written.
void write_file_atomic(const std::string& path, const std::string& bytes);

// An input of a command as the user named it, e.g. {"--queries", "q.jsonl"}.
struct NamedInput {
  std::string name;
  std::string path;
};
enum class OutputKind { kFile, kFolder };
// The one output rule, which every writer of every face checks before any work. The output
// `path` (named `name` as the user gave it, e.g. "--trec") may not
//  - be one of the command's `inputs` (the same file or folder, through any link or spelling);
//  - replace an existing file inside an input folder (kFile), e.g. `--corpus D --out D/corpus.jsonl`;
//  - hold an input inside it (kFolder), as a folder output may be filled or replaced;
//  - replace something of another kind: a file output must be a regular file if it exists (a
//    device, FIFO or folder would be replaced by a file: as root, `--trec /dev/null` replaced
//    /dev/null), a folder output a folder.
// InvalidArgument naming the output and the input. A file output's folder must exist (FileNotFound
// "--trec: folder F does not exist"). Inputs with an empty path are skipped; one that does not
// exist cannot be overwritten (its reader reports it).
void require_safe_output(const std::string& path, const std::string& name, const std::vector<NamedInput>& inputs,
                         OutputKind kind = OutputKind::kFile);
bool path_exists(const std::string& path);
// Lowercase hex SHA-256 of bytes / of a file's content.
std::string sha256_hex(const std::string& bytes);
std::string sha256_file(const std::string& path);
// Joins two path components with one '/'.
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace counterpoint
