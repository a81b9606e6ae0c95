#include "counterpoint/encoder/feature_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <unordered_map>
#include <unordered_set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint {

namespace {

// A file is a header line "counterpoint-features/<format> <width>\n" followed by records of the
// text's SHA-256 (64 hex characters), `width` float32 values (host byte order) and a checksum
// (the first 16 hex characters of the SHA-256 of the two). Records are appended whole, one
// write(2) each, so a crash leaves at most one cut record at the end; but what is appended after
// it (by the next run, or another process) is then misaligned, and a disk can change a byte. So
// a record is used only when its checksum holds, and a file holding a record that fails it or a
// cut record is rewritten whole with the records that hold and those computed since: the cache
// then costs a forward pass, never a wrong row. Each format has its own file name (format 1, which
// had no checksums, was "<key>.bin"): builds of two formats sharing a cache folder (a wheel and a
// source build) each keep their own file instead of rewriting the other's.
constexpr const char* kMagic = "counterpoint-features/";
constexpr int kFormat = 2;
constexpr std::size_t kHashBytes = 64;
constexpr std::size_t kChecksumBytes = 16;

std::string header(std::size_t width) {
  return std::string(kMagic) + std::to_string(kFormat) + " " + std::to_string(width) + "\n";
}
std::string file_name(const std::string& feature_key) {
  return feature_key + ".v" + std::to_string(kFormat) + ".bin";
}
std::size_t record_bytes(std::size_t width) { return kHashBytes + width * sizeof(float) + kChecksumBytes; }

// The checksum of a record whose hash and values are the `bytes` at `at`.
std::string record_checksum(const char* at, std::size_t width) {
  return sha256_hex(std::string(at, kHashBytes + width * sizeof(float))).substr(0, kChecksumBytes);
}

std::string make_record(const std::string& hash, const float* values, std::size_t width) {
  std::string record = hash;
  record.append(reinterpret_cast<const char*>(values), width * sizeof(float));
  record += record_checksum(record.data(), width);
  return record;
}

using Records = std::unordered_map<std::string, std::size_t>;  // text hash -> offset of its record

struct CacheFile {
  std::string bytes;  // the file as read
  std::size_t width = 0;
  Records records;
  bool cut = false;         // the last record is cut short
  std::size_t failed = 0;   // records found failing their checksum

  // Whether the record at `offset` is whole and unchanged since it was written.
  bool intact(std::size_t offset) const {
    const std::size_t checked = kHashBytes + width * sizeof(float);
    return bytes.compare(offset + checked, kChecksumBytes, record_checksum(bytes.data() + offset, width)) == 0;
  }
  const char* values(std::size_t offset) const { return bytes.data() + offset + kHashBytes; }
  bool needs_rewrite() const { return cut || failed > 0; }
};

// The format number a file's header gives ("counterpoint-features/<n> "), 0 for a file without one.
int format_of(const std::string& bytes) {
  const std::string magic = kMagic;
  if (bytes.compare(0, magic.size(), magic) != 0) return 0;
  std::size_t end = magic.size();
  while (end < bytes.size() && end < magic.size() + 6 && std::isdigit(static_cast<unsigned char>(bytes[end]))) ++end;
  if (end == magic.size() || end >= bytes.size() || bytes[end] != ' ') return 0;
  return std::stoi(bytes.substr(magic.size(), end - magic.size()));
}

CacheFile read_cache(const std::string& path, std::size_t width) {
  CacheFile file;
  file.width = width;
  if (!path_exists(path)) return file;
  file.bytes = read_file(path);
  const std::string expected = header(width);
  if (file.bytes.compare(0, expected.size(), expected) != 0) {
    const int format = format_of(file.bytes);
    if (format > kFormat) {
      throw CorruptFile(path + ": a feature cache of format " + std::to_string(format) + ", written by a newer " +
                        "counterpoint (this one reads format " + std::to_string(kFormat) +
                        "); delete the file to rebuild it, or use that version");
    }
    throw CorruptFile(path + ": not a feature cache of format " + std::to_string(kFormat) + " with " +
                      std::to_string(width) + "-wide features; delete the file to rebuild it");
  }
  const std::size_t record = record_bytes(width);
  std::size_t at = expected.size();
  for (; at + record <= file.bytes.size(); at += record) {
    file.records.emplace(file.bytes.substr(at, kHashBytes), at);
  }
  file.cut = at != file.bytes.size();
  return file;
}

// Why `file` is rewritten, for the one line said about it.
std::string rewrite_reason(const CacheFile& file) {
  std::string reason;
  if (file.failed > 0) reason = std::to_string(file.failed) + " of its records fail their checksum";
  if (file.cut) reason += std::string(reason.empty() ? "" : " and ") + "its last record is cut short";
  return reason;
}

void append_records(const std::string& path, std::size_t width, const std::string& records) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  if (!path_exists(path)) write_file_atomic(path, header(width));
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot append to " + path + ": " + std::strerror(errno));
  const std::size_t record = record_bytes(width);
  for (std::size_t at = 0; at < records.size(); at += record) {
    if (::write(fd, records.data() + at, record) != ssize_t(record)) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      throw IoError("cannot append to " + path + ": " + reason);
    }
  }
  ::close(fd);
}

// `file` rebuilt: its records whose checksum holds (each text once), then `computed`.
void rewrite(const std::string& path, CacheFile& file, const std::string& computed) {
  const std::string head = header(file.width);
  std::string bytes = head;
  const std::size_t record = record_bytes(file.width);
  std::unordered_set<std::string> kept;
  file.failed = 0;
  for (std::size_t at = head.size(); at + record <= file.bytes.size(); at += record) {
    if (!file.intact(at)) {
      ++file.failed;
    } else if (kept.insert(file.bytes.substr(at, kHashBytes)).second) {
      bytes.append(file.bytes, at, record);
    }
  }
  bytes += computed;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_file_atomic(path, bytes);
}

}  // namespace

std::string default_cache_directory() {
  if (const char* dir = std::getenv("COUNTERPOINT_CACHE"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return join_path(xdg, "counterpoint");
  if (const char* home = std::getenv("HOME"); home && *home) return join_path(join_path(home, ".cache"), "counterpoint");
  return ".counterpoint-cache";
}

FeatureCache::FeatureCache(std::string directory) : directory_(std::move(directory)) {
  if (directory_.empty()) throw InvalidArgument("FeatureCache: the directory is empty");
}

Matrix FeatureCache::features(const Encoder& encoder, const std::vector<std::string>& texts,
                              const EncodeOptions& options) {
  const std::size_t width = encoder.pooled_width();
  const std::string path = join_path(join_path(directory_, "features"), file_name(encoder.feature_key(options)));
  CacheFile file = read_cache(path, width);
  Matrix out(texts.size(), width);
  std::vector<std::string> hashes(texts.size());
  std::vector<std::string> missing;
  std::vector<std::size_t> missing_rows;
  std::unordered_map<std::string, std::size_t> first_missing;  // a text repeated is computed once
  for (std::size_t i = 0; i < texts.size(); ++i) {
    hashes[i] = sha256_hex(texts[i]);
    auto found = file.records.find(hashes[i]);
    if (found != file.records.end() && !file.intact(found->second)) {
      ++file.failed;
      file.records.erase(found);
      found = file.records.end();
    }
    if (found != file.records.end()) {
      std::memcpy(out.row(i), file.values(found->second), width * sizeof(float));
      for (std::size_t j = 0; j < width; ++j) {
        if (!std::isfinite(out(i, j))) throw CorruptFile(path + ": a cached feature is not finite (delete the file)");
      }
      ++hits_;
    } else if (first_missing.emplace(hashes[i], missing.size()).second) {
      missing.push_back(texts[i]);
      missing_rows.push_back(i);
    }
  }
  if (missing.empty() && !file.needs_rewrite()) return out;
  std::string records;
  if (!missing.empty()) {
    const Matrix computed = encoder.pooled_features(missing, options);
    misses_ += missing.size();
    for (std::size_t m = 0; m < missing.size(); ++m) {
      records += make_record(hashes[missing_rows[m]], computed.row(m), width);
    }
    for (std::size_t i = 0; i < texts.size(); ++i) {
      auto m = first_missing.find(hashes[i]);
      if (m != first_missing.end()) std::memcpy(out.row(i), computed.row(m->second), width * sizeof(float));
    }
  }
  // The cache only saves time: a folder that cannot be written (a read-only home) costs the next
  // run a forward pass, said once, never this run's result.
  try {
    if (file.needs_rewrite()) {
      rewrite(path, file, records);
      std::cerr << "counterpoint: warning: the feature cache " << path << " was rebuilt (" << rewrite_reason(file)
                << "); the features it lost are computed again\n";
    } else {
      append_records(path, width, records);
    }
  } catch (const std::exception& e) {
    if (!warned_) std::cerr << "counterpoint: warning: the feature cache is not kept (" << e.what() << ")\n";
    warned_ = true;
  }
  return out;
}

Matrix FeatureCache::encode(const Encoder& encoder, const std::vector<std::string>& texts,
                            const EncodeOptions& options) {
  return encoder.rows_from_features(features(encoder, texts, options), options.normalize);
}

std::pair<Matrix, Matrix> FeatureCache::encode_both(const Encoder& dense, const Encoder& sparse,
                                                    const std::vector<std::string>& texts,
                                                    const EncodeOptions& options) {
  if (!dense.shares_network_with(sparse)) return {encode(dense, texts, options), encode(sparse, texts, options)};
  const Matrix f = features(dense, texts, options);
  return {dense.rows_from_features(f, options.normalize), sparse.rows_from_features(f, options.normalize)};
}

}  // namespace counterpoint
