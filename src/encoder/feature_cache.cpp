#include "counterpoint/encoder/feature_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <unordered_map>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint {

namespace {

// A file is a header line "counterpoint-features/1 <width>\n" followed by records of the text's
// SHA-256 (64 hex characters) and `width` float32 values (host byte order). Records are appended
// whole, one write(2) each, so a crash leaves at most one partial record at the end, which is
// ignored on reading.
constexpr const char* kMagic = "counterpoint-features/1 ";
constexpr std::size_t kHashBytes = 64;

std::string header(std::size_t width) { return std::string(kMagic) + std::to_string(width) + "\n"; }

using Records = std::unordered_map<std::string, std::size_t>;  // text hash -> offset of its values

struct CacheFile {
  std::string bytes;  // the file as read
  Records records;
};

CacheFile read_cache(const std::string& path, std::size_t width) {
  CacheFile file;
  if (!path_exists(path)) return file;
  file.bytes = read_file(path);
  const std::string expected = header(width);
  if (file.bytes.compare(0, expected.size(), expected) != 0) {
    throw CorruptFile(path + ": not a feature cache of " + std::to_string(width) +
                      "-wide features (delete the file to rebuild it)");
  }
  const std::size_t record = kHashBytes + width * sizeof(float);
  for (std::size_t at = expected.size(); at + record <= file.bytes.size(); at += record) {
    file.records.emplace(file.bytes.substr(at, kHashBytes), at + kHashBytes);
  }
  return file;
}

void append_records(const std::string& path, std::size_t width, const std::string& records) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  if (!path_exists(path)) write_file_atomic(path, header(width));
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot append to " + path + ": " + std::strerror(errno));
  const std::size_t record = kHashBytes + width * sizeof(float);
  for (std::size_t at = 0; at < records.size(); at += record) {
    if (::write(fd, records.data() + at, record) != ssize_t(record)) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      throw IoError("cannot append to " + path + ": " + reason);
    }
  }
  ::close(fd);
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
  const std::string path = join_path(join_path(directory_, "features"), encoder.feature_key(options) + ".bin");
  const CacheFile file = read_cache(path, width);
  Matrix out(texts.size(), width);
  std::vector<std::string> hashes(texts.size());
  std::vector<std::string> missing;
  std::vector<std::size_t> missing_rows;
  std::unordered_map<std::string, std::size_t> first_missing;  // a text repeated is computed once
  for (std::size_t i = 0; i < texts.size(); ++i) {
    hashes[i] = sha256_hex(texts[i]);
    auto found = file.records.find(hashes[i]);
    if (found != file.records.end()) {
      std::memcpy(out.row(i), file.bytes.data() + found->second, width * sizeof(float));
      for (std::size_t j = 0; j < width; ++j) {
        if (!std::isfinite(out(i, j))) throw CorruptFile(path + ": a cached feature is not finite (delete the file)");
      }
      ++hits_;
    } else if (first_missing.emplace(hashes[i], missing.size()).second) {
      missing.push_back(texts[i]);
      missing_rows.push_back(i);
    }
  }
  if (missing.empty()) return out;
  const Matrix computed = encoder.pooled_features(missing, options);
  misses_ += missing.size();
  std::string records;
  for (std::size_t m = 0; m < missing.size(); ++m) {
    records += hashes[missing_rows[m]];
    records.append(reinterpret_cast<const char*>(computed.row(m)), width * sizeof(float));
  }
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto m = first_missing.find(hashes[i]);
    if (m != first_missing.end()) std::memcpy(out.row(i), computed.row(m->second), width * sizeof(float));
  }
  // The cache only saves time: a folder that cannot be written (a read-only home) costs the next
  // run a forward pass, said once, never this run's result.
  try {
    append_records(path, width, records);
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
