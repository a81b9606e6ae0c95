#include "counterpoint/core/files.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "counterpoint/core/errors.h"

namespace counterpoint {

namespace {
std::string errno_text() { return std::strerror(errno); }

std::string to_hex(const unsigned char* digest, unsigned int len) {
  static const char* kHex = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}
}  // namespace

bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string mib(std::uint64_t bytes) {
  return bytes >= (std::uint64_t(1) << 30) ? std::to_string(bytes >> 30) + " GiB" : std::to_string(bytes >> 20) + " MiB";
}

void check_stat(const struct stat& st, const std::string& path, std::uint64_t max_bytes) {
  if (!S_ISREG(st.st_mode)) throw InvalidArgument("expected a file, found " + kind_of(st.st_mode) + ": " + path);
  if (std::uint64_t(st.st_size) > max_bytes) {
    throw InvalidArgument(path + " is " + std::to_string(std::uint64_t(st.st_size)) + " bytes, above the " +
                          mib(max_bytes) + " this file may hold");
  }
}

}  // namespace

std::uint64_t require_regular_file(const std::string& path, std::uint64_t max_bytes) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw FileNotFound("file not found: " + path);
    throw IoError("cannot inspect " + path + ": " + errno_text());
  }
  check_stat(st, path, max_bytes);
  return std::uint64_t(st.st_size);
}

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
  require_regular_file(path, max_bytes);
  // O_NONBLOCK: should the path have become a FIFO since the check, open() does not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError("cannot open " + path + ": " + errno_text());
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    throw IoError("cannot inspect " + path + ": " + why);
  }
  try {
    check_stat(st, path, max_bytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  std::string bytes(std::size_t(st.st_size), '\0');
  std::size_t done = 0;
  while (true) {
    if (done == bytes.size()) bytes.resize(bytes.size() + 4096);  // the file grew since fstat
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = errno_text();
      ::close(fd);
      throw IoError("error while reading " + path + ": " + why);
    }
    if (n == 0) break;
    done += std::size_t(n);
    if (done > max_bytes) {
      ::close(fd);
      throw InvalidArgument(path + " grew above the " + mib(max_bytes) + " this file may hold while it was read");
    }
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

namespace {

namespace fs = std::filesystem;

// The absolute form of `path` with links and "." / ".." resolved as far as it exists.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  fs::path full = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path, ec).lexically_normal() : full;
}

bool is_inside(const fs::path& path, const fs::path& folder) {
  auto [f, p] = std::mismatch(folder.begin(), folder.end(), path.begin(), path.end());
  return (f == folder.end() || (std::next(f) == folder.end() && f->empty())) && p != path.end();
}

// What an existing `path` is when it is not of `kind`, "" when it is (or does not exist).
std::string wrong_kind(const std::string& path, OutputKind kind) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  if (kind == OutputKind::kFolder) return S_ISDIR(st.st_mode) ? "" : S_ISREG(st.st_mode) ? "a file" : kind_of(st.st_mode);
  return S_ISREG(st.st_mode) ? "" : kind_of(st.st_mode);
}

}  // namespace

void require_safe_output(const std::string& path, const std::string& name, const std::vector<NamedInput>& inputs,
                         OutputKind kind) {
  const std::string output = name + " " + path;
  if (kind == OutputKind::kFile) {
    // A file is written beside its temporary copy, into a folder that must exist before hours of
    // work, not after (a folder output is created with its parents).
    const std::string parent = fs::path(path).parent_path().string();
    std::error_code missing;
    if (!parent.empty() && !fs::is_directory(parent, missing)) {
      throw FileNotFound(name + ": folder " + parent + " does not exist");
    }
  }
  const std::string found = wrong_kind(path, kind);
  if (!found.empty()) {
    throw InvalidArgument(output + " is " + found + ", not a " + (kind == OutputKind::kFile ? "regular file" : "folder") +
                          "; writing there would replace it: choose another path");
  }
  const fs::path out = resolved(path);
  std::error_code ec;
  // Being an input is named before merely sharing its folder (`--dataset D --qrels D/qrels/x.tsv`).
  for (const NamedInput& input : inputs) {
    if (input.path.empty() || !fs::exists(input.path, ec)) continue;
    if (fs::equivalent(path, input.path, ec) || out == resolved(input.path)) {
      throw InvalidArgument(output + " is the input " + input.name + " " + input.path +
                            "; writing it would destroy the input: choose another path");
    }
  }
  for (const NamedInput& input : inputs) {
    if (input.path.empty() || !fs::exists(input.path, ec)) continue;
    const std::string named = "the input " + input.name + " " + input.path;
    const fs::path in = resolved(input.path);
    if (kind == OutputKind::kFile && is_inside(out, in) && path_exists(path)) {
      throw InvalidArgument(output + " is inside " + named + " and exists; writing it could destroy an input: "
                            "choose a path outside that folder or a new file");
    }
    if (kind == OutputKind::kFolder && is_inside(in, out)) {
      throw InvalidArgument(output + " holds " + named + "; writing the output there could destroy it: choose "
                            "another folder");
    }
  }
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  const std::string found = wrong_kind(path, OutputKind::kFile);
  if (!found.empty()) {
    throw InvalidArgument("cannot write " + path + ": it is " + found +
                          ", not a regular file, and writing would replace it");
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    // The temporary file is ours, not the user's: the message names the file they asked for.
    const bool missing = errno == ENOENT;
    const std::string why = errno_text();
    const std::string parent = std::filesystem::path(path).parent_path().string();
    std::error_code error;
    if (missing && !parent.empty() && !std::filesystem::is_directory(parent, error)) {
      throw IoError("cannot write " + path + ": folder " + parent + " does not exist");
    }
    throw IoError("cannot write " + path + ": " + why);
  }
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      throw IoError("cannot write " + tmp + ": " + why);
    }
    written += std::size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw IoError("cannot flush " + tmp + ": " + why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw IoError("cannot rename " + tmp + " to " + path + ": " + why);
  }
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &len) != 1) {
    throw Error("SHA-256 computation failed");
  }
  return to_hex(digest, len);
}

std::string sha256_file(const std::string& path) { return sha256_hex(read_file(path)); }

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace counterpoint
