// Saving and loading DocumentIndex as one directory:
//   header.json     format name, version, options, counts, and per section its file, byte
//                   length and SHA-256; a "checksum" field covers the header itself
//   documents.bin   per slot: u8 live, u64 id length, id, u64 text length, text
//   dense.bin       slots x dim float32 (IVF kinds; flat/HNSW rows live in faiss.bin)
//   sparse.bin      slots x sparse_dim float32 or float16
//   tokens.bin      slots x u64 token-row counts, then all token rows (token_dim float32)
//   faiss.bin       faiss::write_index of the search structure (absent for untrained IVF)
// Integers and floats are little-endian. header.json is written last and the directory is
// swapped in whole, so a directory without a valid header is never a loadable index.
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/json_document.h"
#include "counterpoint/core/json_integer.h"
#include "counterpoint/core/files.h"
#include "counterpoint/text/words.h"
#include "document_index_state.h"
#include "index_storage_hooks.h"

namespace counterpoint::index {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "counterpoint-document-index";
constexpr int kVersion = 1;
constexpr const char* kHeaderFile = "header.json";
constexpr std::uintmax_t kMaxHeaderBytes = 1 << 20;
constexpr std::uint64_t kMaxSlots = std::uint64_t(1) << 40;
constexpr std::uint64_t kMaxWidth = std::uint64_t(1) << 20;
constexpr std::uint64_t kMinDocumentRecord = 17;  // live flag + two u64 lengths

static_assert(sizeof(Eigen::half) == 2, "float16 rows are stored as 2 bytes");

// ---- writing ----

void put_u64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }

template <typename T>
void put_raw(std::string& out, const T* data, std::size_t count) {
  out.append(reinterpret_cast<const char*>(data), count * sizeof(T));
}

std::string sparse_storage_name(IndexOptions::SparseStorage s) {
  return s == IndexOptions::SparseStorage::kFloat16 ? "float16" : "float32";
}

json options_to_json(const IndexOptions& o) {
  json options{{"dim", o.dim},
               {"sparse_dim", o.sparse_dim},
               {"sparse_storage", sparse_storage_name(o.sparse_storage)},
               {"kind", o.kind},
               {"hnsw_m", o.hnsw_m},
               {"hnsw_ef_construction", o.hnsw_ef_construction},
               {"hnsw_ef_search", o.hnsw_ef_search},
               {"ivf_nlist", o.ivf_nlist},
               {"ivf_nprobe", o.ivf_nprobe},
               {"pq_m", o.pq_m},
               {"pq_bits", o.pq_bits},
               {"normalize_dense", o.normalize_dense},
               {"store_token_embeddings", o.store_token_embeddings},
               {"token_dim", o.token_dim},
               {"build_bm25", o.build_bm25},
               {"bm25", {{"k1", o.bm25.k1}, {"b", o.bm25.b}, {"stem", o.bm25.stem}}},
               {"encoder_id", o.encoder_id},
               {"sparse_encoder_id", o.sparse_encoder_id}};
  // The settings are recorded as the objects they are (Encoder::settings), when known.
  for (const auto& [key, text] : {std::pair{"encoder_settings", &o.encoder_settings},
                                  std::pair{"sparse_encoder_settings", &o.sparse_encoder_settings}}) {
    if (!text->empty()) options[key] = parse_json_document(*text, key);
  }
  return options;
}

std::string header_checksum(json header) {
  header.erase("checksum");
  return sha256_hex(header.dump());
}

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::function<void(storage_testing::StorageStep, const std::string&)>& storage_hook() {
  static std::function<void(storage_testing::StorageStep, const std::string&)> hook;
  return hook;
}
bool exchange_refused_for_tests = false;

void reached(storage_testing::StorageStep step, const fs::path& dir) {
  if (storage_hook()) storage_hook()(step, dir.string());
}

// renameat2(RENAME_EXCHANGE) of two paths; false with errno when the file system (or kernel)
// cannot exchange.
bool exchange(const fs::path& a, const fs::path& b) {
  if (exchange_refused_for_tests) {
    errno = EINVAL;
    return false;
  }
  return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
}

// The version directories of the indirection below: ".NAME.version-PID-N" beside the target,
// named apart from the working directories, which remove_stale_saves treats otherwise.
std::string version_prefix(const fs::path& target) { return "." + target.filename().string() + ".version-"; }
// The links link_into_place renames over `target`: ".NAME.link-PID-N".
std::string link_prefix(const fs::path& target) { return "." + target.filename().string() + ".link-"; }

// File systems without RENAME_EXCHANGE cannot swap a directory for another, and rename(2) cannot
// replace a non-empty one. There the index is a version indirection: `target` is a symbolic link
// to a version directory beside it, and a save links the new version in by renaming a fresh link
// over the old one (one atomic step), then removes the previous version. A reader opens the
// directory through the link once and reads every file relative to it (load). Only the first such
// save of a folder that is still a plain directory has a moment without `target`.
void link_into_place(const fs::path& fresh, const fs::path& target, const std::string& tag) {
  const fs::path version = target.parent_path() / (version_prefix(target) + tag);
  const fs::path link = target.parent_path() / (link_prefix(target) + tag);
  if (::rename(fresh.c_str(), version.c_str()) != 0) {
    throw IoError("cannot rename " + fresh.string() + " to " + version.string() + ": " + std::strerror(errno));
  }
  std::error_code ec;
  // The previous version, removed once replaced: only a version directory of ours, never the
  // folder a user's own link points to.
  fs::path previous;
  if (fs::is_symlink(target, ec)) {
    const fs::path pointed = fs::read_symlink(target, ec);
    if (!ec && !pointed.has_parent_path() && pointed.string().rfind(version_prefix(target), 0) == 0) {
      previous = target.parent_path() / pointed;
    }
  }
  fs::remove(link, ec);
  fs::create_directory_symlink(version.filename(), link, ec);
  if (ec) throw IoError("cannot create the link " + link.string() + ": " + ec.message());
  if (!fs::is_symlink(target, ec) && fs::exists(target, ec)) {
    // A plain directory: moved aside first (the one moment without `target`).
    const fs::path old = fs::path(fresh.string() + ".old");
    if (::rename(target.c_str(), old.c_str()) != 0) {
      throw IoError("cannot replace " + target.string() + ": " + std::strerror(errno));
    }
    previous = old;
  }
  if (::rename(link.c_str(), target.c_str()) != 0) {
    throw IoError("cannot replace " + target.string() + ": " + std::strerror(errno));
  }
  reached(storage_testing::StorageStep::kSaveSwapped, target);
  if (!previous.empty()) fs::remove_all(previous, ec);
}

// Moves `fresh` into place at `target`, atomically for readers: exchanged with an existing
// directory (RENAME_EXCHANGE), else through a version indirection (link_into_place).
void swap_into_place(const fs::path& fresh, const fs::path& target, const std::string& tag) {
  std::error_code ec;
  const bool exists = fs::exists(target, ec);
  if (exists && !fs::is_directory(target, ec)) {
    throw IoError("cannot save index: " + target.string() + " exists and is not a directory");
  }
  const bool linked = fs::is_symlink(target, ec) &&
                      fs::read_symlink(target, ec).string().rfind(version_prefix(target), 0) == 0;
  if (!exists) {
    if (::rename(fresh.c_str(), target.c_str()) != 0) {
      throw IoError("cannot rename " + fresh.string() + " to " + target.string() + ": " + std::strerror(errno));
    }
    reached(storage_testing::StorageStep::kSaveSwapped, target);
    return;
  }
  if (!linked && exchange(fresh, target)) {
    reached(storage_testing::StorageStep::kSaveSwapped, target);
    fs::remove_all(fresh, ec);  // now holds the previous index
    return;
  }
  link_into_place(fresh, target, tag);
}

// Where save(dir) writes: the normalised target directory, its parent, and the name of the
// hidden working directory a save of this process makes beside the target ("<tag>" after the pid).
struct SavePaths {
  fs::path target, parent;
  fs::path working(const std::string& tag) const {
    return parent / ("." + target.filename().string() + ".saving-" + std::to_string(::getpid()) + "-" + tag);
  }
};

SavePaths save_paths(const std::string& dir) {
  if (dir.empty()) throw InvalidArgument("save: directory path is empty");
  SavePaths paths;
  paths.target = fs::path(dir).lexically_normal();
  // "." and ".." ("idx/.." normalises to ".") name no entry of a parent folder that a rename
  // could replace, and "." would be its own parent (the working directory made inside the index,
  // the exchange refused): they are saved under their absolute name.
  if (paths.target.filename() == "." || paths.target.filename() == "..") {
    std::error_code ec;
    const fs::path absolute = fs::absolute(paths.target, ec);
    if (ec) throw IoError("cannot save an index to " + dir + ": the current folder is unknown: " + ec.message());
    paths.target = absolute.lexically_normal();
  }
  if (!paths.target.has_filename()) paths.target = paths.target.parent_path();
  paths.parent = paths.target.has_parent_path() ? paths.target.parent_path() : fs::path(".");
  return paths;
}

// Removes what saves of `target` killed part-way left beside it, once their process no longer
// runs: ".NAME.saving-PID-N" working directories, and on file systems without an exchange
// (link_into_place) ".NAME.version-PID-N" directories never linked in and ".NAME.link-PID-N"
// links never renamed into place (these two only once an hour old, as another host's save may
// own them). A ".old" one is the previous index of a save that died between
// its two renames; it is removed only once `target` exists again. The version `target` links to
// is the index itself, whichever process saved it.
// How old a version directory or link of the indirection must be before a save removes it. The
// file systems without an exchange are often shared ones (NFS, a volume two containers mount), where
// such an entry may be another host's save in progress and its PID says nothing on this host; a
// version removed under that save would leave the index a dangling link.
constexpr long kIndirectionLeftoverSeconds = 3600;

bool modified_longer_ago_than(const fs::path& path, long seconds) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0) return false;
  return std::time(nullptr) - status.st_mtime > seconds;
}

void remove_stale_saves(const fs::path& parent, const fs::path& target) {
  const std::string saving = "." + target.filename().string() + ".saving-";
  const std::string version = version_prefix(target), link = link_prefix(target);
  std::error_code ec;
  const bool linked = fs::is_symlink(target, ec);
  const std::string current = linked ? fs::read_symlink(target, ec).string() : std::string();
  if (linked && ec) return;  // which version is the index is unknown: nothing is removed
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::string rest;
    bool indirection = false;
    for (const std::string* prefix : {&saving, &version, &link}) {
      if (name.rfind(*prefix, 0) == 0) {
        rest = name.substr(prefix->size());
        indirection = prefix != &saving;
      }
    }
    if (rest.empty() || name == current) continue;
    char* after = nullptr;
    const long pid = std::strtol(rest.c_str(), &after, 10);
    if (pid <= 0 || after == rest.c_str() || *after != '-') continue;
    const bool running = ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
    if (running) continue;
    if (indirection && !modified_longer_ago_than(it->path(), kIndirectionLeftoverSeconds)) continue;
    std::error_code ignored;
    const bool old_copy = name.size() > 4 && name.compare(name.size() - 4, 4, ".old") == 0;
    if (old_copy && !fs::exists(target, ignored)) continue;
    fs::remove_all(it->path(), ignored);
  }
}

// ---- reading ----

[[noreturn]] void corrupt(const std::string& dir, const std::string& what) {
  throw CorruptFile("index " + dir + ": " + what);
}

template <typename T>
T field(const json& j, const char* key, const std::string& dir) {
  auto it = j.find(key);
  if (it == j.end()) corrupt(dir, std::string("header.json lacks field '") + key + "'");
  if (!json_holds<T>(*it)) corrupt(dir, std::string("header.json field '") + key + "' has the wrong type");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    corrupt(dir, std::string("header.json field '") + key + "' has the wrong type");
  }
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& dir, const char* what) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) corrupt(dir, std::string("size of ") + what + " overflows");
  return out;
}

// A file opened relative to the directory a load holds open, closed on scope exit.
class OpenedFile {
 public:
  // O_NONBLOCK: a FIFO planted in an index does not wait for a writer (fstat refuses it next).
  OpenedFile(int dirfd, const std::string& file)
      : fd_(::openat(dirfd, file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) {}
  ~OpenedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenedFile(const OpenedFile&) = delete;
  OpenedFile& operator=(const OpenedFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// The size of an opened regular file `name` of `dir` (`what` in messages); CorruptFile naming
// what it found for anything else, in the words of core's file checks.
std::uint64_t regular_size(const OpenedFile& opened, const std::string& dir, const std::string& name,
                           const std::string& what) {
  struct stat st;
  if (::fstat(opened.fd(), &st) != 0) corrupt(dir, what + " cannot be inspected: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    try {
      require_regular_file(join_path(dir, name));
    } catch (const Error& e) {
      corrupt(dir, what + ": " + e.what());
    }
    corrupt(dir, what + " is not a regular file");
  }
  return std::uint64_t(st.st_size);
}

// All `size` bytes of an opened file, from its start whatever was read of it before (two
// sections of a damaged header may name one file).
std::string read_opened(const OpenedFile& opened, std::uint64_t size, const std::string& dir, const std::string& file) {
  std::string bytes(std::size_t(size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(opened.fd(), bytes.data() + done, bytes.size() - done, off_t(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("index " + dir + ": error while reading " + file + ": " + std::strerror(errno));
    if (n == 0) corrupt(dir, "section file " + file + " changed while being read");
    done += std::size_t(n);
  }
  return bytes;
}

// The section files of the version a load has just opened, opened at once with its header.json,
// before anything is read: a save that then replaces and removes that version cannot take their
// bytes away, as an open file keeps them. Opened lazily, one by one, a save that overtook the load
// removed the files still to read; opened after the header was parsed and checked, a save in a
// tight loop overtook a slow load (one under AddressSanitizer) at most attempts. So the files a
// save writes are opened by their names first (a missing one is left for read_section to report),
// and a file the header names otherwise is opened when read.
class SectionFiles {
 public:
  explicit SectionFiles(int dirfd) : dirfd_(dirfd) {
    for (const char* file : {"documents.bin", "dense.bin", "sparse.bin", "tokens.bin", "faiss.bin"}) {
      opened_.emplace(file, std::make_unique<OpenedFile>(dirfd, file));
    }
  }
  static bool valid_name(const std::string& file) {
    return !file.empty() && file.find('/') == std::string::npos && file != "." && file != "..";
  }
  // The file opened for `file`; one a save does not write is opened now.
  const OpenedFile& get(const std::string& file) {
    auto it = opened_.find(file);
    if (it == opened_.end()) it = opened_.emplace(file, std::make_unique<OpenedFile>(dirfd_, file)).first;
    return *it->second;
  }

 private:
  int dirfd_;
  std::map<std::string, std::unique_ptr<OpenedFile>> opened_;
};

// Reads one section of the version whose files `files` holds open after checking its recorded
// and actual lengths against `expected` (the length implied by the header's counts), then its
// checksum.
std::string read_section(const std::string& dir, SectionFiles& files, const json& sections, const std::string& name,
                         std::uint64_t expected) {
  auto it = sections.find(name);
  if (it == sections.end()) corrupt(dir, "header.json lists no section '" + name + "'");
  const auto file = field<std::string>(*it, "file", dir);
  const auto recorded = field<std::uint64_t>(*it, "bytes", dir);
  const auto sha = field<std::string>(*it, "sha256", dir);
  if (!SectionFiles::valid_name(file)) corrupt(dir, "section '" + name + "' names an invalid file '" + file + "'");
  if (expected != UINT64_MAX && recorded != expected) {
    corrupt(dir, "section '" + name + "' records " + std::to_string(recorded) + " bytes but the header's counts imply " +
                     std::to_string(expected));
  }
  const OpenedFile& opened = files.get(file);
  if (opened.fd() < 0) corrupt(dir, "section file " + file + " is missing");
  const std::uint64_t actual = regular_size(opened, dir, file, "section file " + file);
  if (actual != recorded) {
    corrupt(dir, "section file " + file + " has " + std::to_string(actual) + " bytes, header records " +
                     std::to_string(recorded) + " (truncated or overwritten)");
  }
  const std::string bytes = read_opened(opened, recorded, dir, file);
  if (sha256_hex(bytes) != sha) corrupt(dir, "section file " + file + " fails its SHA-256 checksum");
  return bytes;
}

// The directory a load reads, held open so that every file comes from the same one.
// fd() < 0 when it could not be opened, with the reason in error().
class OpenedDirectory {
 public:
  explicit OpenedDirectory(const std::string& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), error_(fd_ < 0 ? errno : 0) {}
  ~OpenedDirectory() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenedDirectory(const OpenedDirectory&) = delete;
  OpenedDirectory& operator=(const OpenedDirectory&) = delete;
  int fd() const { return fd_; }
  int error() const { return error_; }
  // False once `dir` names another directory than the one held: a save replaced it.
  bool still_at(const std::string& dir) const {
    struct stat now, held;
    return ::stat(dir.c_str(), &now) == 0 && ::fstat(fd_, &held) == 0 && now.st_dev == held.st_dev &&
           now.st_ino == held.st_ino;
  }

 private:
  int fd_;
  int error_;
};

// FileNotFound for an index directory that open(2) refused with `error`, in the words of a
// missing folder or of a path that is not one where that is what `dir` names now.
[[noreturn]] void unopenable(const std::string& dir, int error) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw FileNotFound("index directory not found: " + dir);
  if (!fs::is_directory(dir, ec)) throw FileNotFound("index path is not a directory: " + dir);
  throw FileNotFound("index directory cannot be opened: " + dir + ": " + std::strerror(error));
}

class Cursor {
 public:
  Cursor(const std::string& bytes, std::string dir, std::string file)
      : bytes_(bytes), dir_(std::move(dir)), file_(std::move(file)) {}
  std::uint64_t u64() {
    need(8);
    std::uint64_t v;
    std::memcpy(&v, bytes_.data() + pos_, 8);
    pos_ += 8;
    return v;
  }
  std::uint8_t u8() {
    need(1);
    return std::uint8_t(bytes_[pos_++]);
  }
  std::string str(std::uint64_t n) {
    need(n);
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  const char* take(std::uint64_t n) {
    need(n);
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  void need(std::uint64_t n) const {
    if (n > bytes_.size() - pos_) corrupt(dir_, file_ + " ends early at byte " + std::to_string(pos_));
  }
  const std::string& bytes_;
  std::string dir_, file_;
  std::size_t pos_ = 0;
};

}  // namespace

namespace {

// Saving replaces the target folder whole, so it may only replace an empty folder or an index
// this library wrote (its header.json names the format): never a folder of the user's files, a
// corpus or a model.
void require_replaceable(const fs::path& target) {
  std::error_code ec;
  if (!fs::exists(target, ec)) return;
  if (!fs::is_directory(target, ec)) {
    throw IoError("cannot save an index to " + target.string() + ": " + target.string() +
                  " exists and is not a directory");
  }
  if (fs::is_empty(target, ec)) return;
  const fs::path header = target / kHeaderFile;
  try {
    if (fs::is_regular_file(header, ec) &&
        read_json_document(header.string(), kMaxHeaderBytes).value("format", std::string()) == kFormat) {
      return;
    }
  } catch (const Error&) {
    // An unreadable header is no proof that the folder is an index: refused below.
  } catch (const nlohmann::json::exception&) {
  }
  throw InvalidArgument("cannot save an index to " + target.string() +
                        ": the folder holds files that are not a counterpoint index, and saving replaces the "
                        "folder whole; choose a new or empty folder");
}

}  // namespace

void DocumentIndex::require_saveable(const std::string& dir) {
  const SavePaths paths = save_paths(dir);
  const fs::path& target = paths.target;
  const fs::path& parent = paths.parent;
  std::error_code ec;
  require_replaceable(target);
  fs::create_directories(parent, ec);
  if (ec) throw IoError("cannot save an index to " + target.string() + ": cannot create " + parent.string() + ": " + ec.message());
  const fs::path probe = paths.working("probe");
  if (!fs::create_directory(probe, ec) || ec) {
    throw IoError("cannot save an index to " + target.string() + ": " + parent.string() + " is not writable (" +
                  ec.message() + ")");
  }
  fs::remove(probe, ec);
}

void DocumentIndex::save(const std::string& dir) const {
  static std::atomic<unsigned> save_counter{0};
  const State& st = *state_;
  const SavePaths paths = save_paths(dir);
  const fs::path& target = paths.target;
  const fs::path& parent = paths.parent;
  const std::string tag = std::to_string(save_counter++);
  const fs::path fresh = paths.working(tag);
  std::error_code ec;
  require_replaceable(target);
  fs::create_directories(parent, ec);
  remove_stale_saves(parent, target);
  if (!fs::create_directory(fresh, ec) || ec) {
    throw IoError("save: cannot create " + fresh.string() + ": " + ec.message());
  }

  try {
    std::shared_lock lock(st.mutex);
    const IndexOptions& o = st.options;
    json sections = json::object();
    auto write_section = [&](const std::string& name, const std::string& file, const std::string& bytes) {
      write_file_atomic((fresh / file).string(), bytes);
      sections[name] = {{"file", file}, {"bytes", bytes.size()}, {"sha256", sha256_hex(bytes)}};
    };
    {
      std::string docs;
      for (std::size_t s = 0; s < st.slots; ++s) {
        docs.push_back(st.is_live(Slot(s)) ? 1 : 0);
        put_u64(docs, st.ids[s].size());
        docs += st.ids[s];
        put_u64(docs, st.texts[s].size());
        docs += st.texts[s];
      }
      write_section("documents", "documents.bin", docs);
    }
    if (st.is_ivf()) {
      std::string dense;
      put_raw(dense, st.dense_rows.data(), st.dense_rows.size());
      write_section("dense", "dense.bin", dense);
    }
    if (o.sparse_dim > 0) {
      std::string sparse;
      if (o.sparse_storage == IndexOptions::SparseStorage::kFloat16) {
        put_raw(sparse, st.sparse_f16.data(), st.sparse_f16.size());
      } else {
        put_raw(sparse, st.sparse_f32.data(), st.sparse_f32.size());
      }
      write_section("sparse", "sparse.bin", sparse);
    }
    std::uint64_t token_rows = 0;
    if (o.store_token_embeddings) {
      std::string tokens;
      for (const Matrix& m : st.tokens) {
        put_u64(tokens, m.rows());
        token_rows += m.rows();
      }
      for (const Matrix& m : st.tokens) put_raw(tokens, m.data(), m.rows() * m.cols());
      write_section("tokens", "tokens.bin", tokens);
    }
    if (st.faiss) {
      faiss::VectorIOWriter writer;
      try {
        faiss::write_index(st.faiss.get(), &writer);
      } catch (const faiss::FaissException& e) {
        throw IoError(std::string("save: FAISS could not serialise the index: ") + e.what());
      }
      write_section("faiss", "faiss.bin", std::string(writer.data.begin(), writer.data.end()));
    }
    json header = {{"format", kFormat},   {"version", kVersion},      {"options", options_to_json(o)},
                   {"slots", st.slots},   {"live", st.live},          {"token_rows", token_rows},
                   {"trained", st.faiss != nullptr}, {"sections", sections}};
    header["checksum"] = header_checksum(header);
    write_file_atomic((fresh / kHeaderFile).string(), header.dump(2));
    fsync_path(fresh.string());
    reached(storage_testing::StorageStep::kSaveWritten, target);
    swap_into_place(fresh, target, std::to_string(::getpid()) + "-" + tag);
    fsync_path(parent.string());
  } catch (...) {
    fs::remove_all(fresh, ec);
    throw;
  }
}

DocumentIndex DocumentIndex::load(const std::string& dir) {
  // A save swaps a whole new directory in (swap_into_place) and then removes the previous one.
  // Every file is read relative to the directory as first opened, and all of them are held open
  // from before its header is read (SectionFiles), so a load sees one index whole. Only a save
  // that replaced and removed the directory in the moment between its opening and its files'
  // (a few system calls) takes a file away; then `dir` names the new index, which is read
  // instead. A bounded number of times: a load never waits on saves without end. 32, because a
  // save in a tight loop overtakes a slow load (one under AddressSanitizer) about every other
  // attempt, and at 8 attempts one load in a few hundred was overtaken at all of them.
  constexpr int kAttempts = 32;
  for (int attempt = 1;; ++attempt) {
    const OpenedDirectory opened(dir);
    if (opened.fd() < 0) {
      // Through the link of a version indirection (link_into_place), a save may replace the link
      // and remove the version it named between open(2) reading the link and opening that version.
      std::error_code ec;
      if (attempt < kAttempts && fs::is_symlink(dir, ec)) continue;
      unopenable(dir, opened.error());
    }
    try {
      return load_directory(dir, opened.fd());
    } catch (const Error& e) {
      if (opened.still_at(dir)) throw;
      if (attempt == kAttempts) {
        throw IoError("index " + dir + " was replaced by another save while being read, " + std::to_string(kAttempts) +
                      " times in a row; load it again (last: " + e.what() + ")");
      }
    }
  }
}

DocumentIndex DocumentIndex::load_directory(const std::string& dir, int dirfd) {
  reached(storage_testing::StorageStep::kLoadDirectoryOpened, dir);
  const OpenedFile header_file(dirfd, kHeaderFile);
  const int header_error = header_file.fd() < 0 ? errno : 0;  // before the next opens change errno
  SectionFiles files(dirfd);
  reached(storage_testing::StorageStep::kLoadSectionsOpened, dir);
  if (header_file.fd() < 0) {
    if (header_error == ENOENT) corrupt(dir, "no header.json (not a saved index, or a save that did not finish)");
    corrupt(dir, std::string("header.json cannot be opened: ") + std::strerror(header_error));
  }
  const std::uint64_t header_bytes = regular_size(header_file, dir, kHeaderFile, "header.json");
  if (header_bytes > kMaxHeaderBytes) {
    corrupt(dir, "header.json is " + std::to_string(header_bytes) + " bytes, above the 1 MiB it may hold");
  }
  json header;
  try {
    header = parse_json_document(read_opened(header_file, header_bytes, dir, "header.json"),
                                 join_path(dir, kHeaderFile));
  } catch (const CorruptFile& e) {  // names header.json, line and column
    corrupt(dir, e.what());
  }
  if (!header.is_object()) corrupt(dir, "header.json is not a JSON object");
  if (field<std::string>(header, "checksum", dir) != header_checksum(header)) {
    corrupt(dir, "header.json fails its checksum");
  }
  if (field<std::string>(header, "format", dir) != kFormat) {
    corrupt(dir, "header.json has format '" + field<std::string>(header, "format", dir) + "', expected '" + kFormat + "'");
  }
  const int version = field<int>(header, "version", dir);
  if (version != kVersion) {
    corrupt(dir, "format version " + std::to_string(version) + " is not supported (this build reads version " +
                     std::to_string(kVersion) + ")");
  }

  reached(storage_testing::StorageStep::kLoadHeaderRead, dir);

  // ---- options and counts ----
  const json opts = field<json>(header, "options", dir);
  IndexOptions o;
  o.dim = field<std::size_t>(opts, "dim", dir);
  o.sparse_dim = field<std::size_t>(opts, "sparse_dim", dir);
  const auto storage = field<std::string>(opts, "sparse_storage", dir);
  if (storage != "float32" && storage != "float16") corrupt(dir, "unknown sparse_storage '" + storage + "'");
  o.sparse_storage = storage == "float16" ? IndexOptions::SparseStorage::kFloat16 : IndexOptions::SparseStorage::kFloat32;
  o.kind = field<std::string>(opts, "kind", dir);
  o.hnsw_m = field<int>(opts, "hnsw_m", dir);
  o.hnsw_ef_construction = field<int>(opts, "hnsw_ef_construction", dir);
  o.hnsw_ef_search = field<int>(opts, "hnsw_ef_search", dir);
  o.ivf_nlist = field<int>(opts, "ivf_nlist", dir);
  o.ivf_nprobe = field<int>(opts, "ivf_nprobe", dir);
  o.pq_m = field<int>(opts, "pq_m", dir);
  o.pq_bits = field<int>(opts, "pq_bits", dir);
  o.normalize_dense = field<bool>(opts, "normalize_dense", dir);
  o.store_token_embeddings = field<bool>(opts, "store_token_embeddings", dir);
  o.token_dim = field<std::size_t>(opts, "token_dim", dir);
  o.build_bm25 = field<bool>(opts, "build_bm25", dir);
  // Optional: indexes saved before encoder ids were recorded lack them.
  if (opts.contains("encoder_id")) o.encoder_id = field<std::string>(opts, "encoder_id", dir);
  if (opts.contains("sparse_encoder_id")) o.sparse_encoder_id = field<std::string>(opts, "sparse_encoder_id", dir);
  // Optional too: recorded since identities cover the model's settings (Encoder::settings).
  for (const auto& [key, settings] : {std::pair{"encoder_settings", &o.encoder_settings},
                                      std::pair{"sparse_encoder_settings", &o.sparse_encoder_settings}}) {
    if (!opts.contains(key)) continue;
    const json recorded = field<json>(opts, key, dir);
    if (!recorded.is_object()) corrupt(dir, std::string("header.json field '") + key + "' is not an object");
    *settings = recorded.dump();
  }
  const json bm25 = field<json>(opts, "bm25", dir);
  o.bm25.k1 = field<float>(bm25, "k1", dir);
  o.bm25.b = field<float>(bm25, "b", dir);
  o.bm25.stem = field<bool>(bm25, "stem", dir);
  if (o.dim > kMaxWidth || o.sparse_dim > kMaxWidth || o.token_dim > kMaxWidth) {
    corrupt(dir, "a width in header.json exceeds " + std::to_string(kMaxWidth));
  }
  const auto slots = field<std::uint64_t>(header, "slots", dir);
  const auto live = field<std::uint64_t>(header, "live", dir);
  const auto token_rows = field<std::uint64_t>(header, "token_rows", dir);
  const bool trained = field<bool>(header, "trained", dir);
  if (slots > kMaxSlots || live > slots || token_rows > kMaxSlots) corrupt(dir, "implausible document counts in header.json");
  const json sections = field<json>(header, "sections", dir);

  std::unique_ptr<DocumentIndex> built;
  try {
    built.reset(new DocumentIndex(o));
  } catch (const InvalidArgument& e) {
    corrupt(dir, std::string("header.json holds invalid options: ") + e.what());
  }
  State& st = *built->state_;
  if (!st.is_ivf() && !trained) corrupt(dir, "header.json marks a " + o.kind + " index as untrained");

  // ---- documents ----
  {
    const std::string bytes = read_section(dir, files, sections, "documents", UINT64_MAX);
    if (bytes.size() / kMinDocumentRecord < slots) {
      corrupt(dir, "documents.bin (" + std::to_string(bytes.size()) + " bytes) is too short for " +
                       std::to_string(slots) + " slots");
    }
    Cursor cur(bytes, dir, "documents.bin");
    st.ids.reserve(slots);
    st.texts.reserve(slots);
    for (std::uint64_t s = 0; s < slots; ++s) {
      const std::uint8_t flag = cur.u8();
      if (flag > 1) corrupt(dir, "documents.bin has an invalid live flag at slot " + std::to_string(s));
      std::string id = cur.str(cur.u64());
      std::string text = cur.str(cur.u64());
      if (flag == 1) {
        if (id.empty()) corrupt(dir, "documents.bin has an empty id at slot " + std::to_string(s));
        // Ids and texts reach Python as str: bytes that are not UTF-8 are damage found here, not a
        // UnicodeDecodeError at every later ids() or text() (BM25 checks the texts it analyses).
        try {
          text::alphanumeric_words(id);
        } catch (const InvalidArgument& e) {
          corrupt(dir, "documents.bin: the id at slot " + std::to_string(s) + " is not UTF-8 (" + e.what() + ")");
        }
        if (!st.bm25) {
          try {
            text::alphanumeric_words(text);
          } catch (const InvalidArgument& e) {
            corrupt(dir, "documents.bin: the text of '" + id + "' is not UTF-8 (" + e.what() + ")");
          }
        }
        if (!st.slot_by_id.emplace(id, Slot(s)).second) corrupt(dir, "documents.bin repeats id '" + id + "'");
        st.set_live(s, true);
        ++st.live;
        if (st.bm25) {
          try {
            st.bm25->add(Slot(s), text);
          } catch (const InvalidArgument& e) {
            corrupt(dir, "documents.bin: text of '" + id + "': " + e.what());
          }
        }
      } else {
        st.set_live(s, false);
      }
      st.ids.push_back(std::move(id));
      st.texts.push_back(std::move(text));
    }
    if (!cur.at_end()) corrupt(dir, "documents.bin has bytes after the last document");
    if (st.live != live) {
      corrupt(dir, "documents.bin holds " + std::to_string(st.live) + " live documents, header records " +
                       std::to_string(live));
    }
    st.slots = slots;
  }
  // ---- dense / sparse / tokens ----
  if (st.is_ivf()) {
    const std::string bytes =
        read_section(dir, files, sections, "dense", checked_mul(checked_mul(slots, o.dim, dir, "dense"), 4, dir, "dense"));
    st.dense_rows.resize(slots * o.dim);
    if (!bytes.empty()) std::memcpy(st.dense_rows.data(), bytes.data(), bytes.size());
  }
  if (o.sparse_dim > 0) {
    const bool half = o.sparse_storage == IndexOptions::SparseStorage::kFloat16;
    const std::uint64_t n = checked_mul(slots, o.sparse_dim, dir, "sparse");
    const std::string bytes = read_section(dir, files, sections, "sparse", checked_mul(n, half ? 2 : 4, dir, "sparse"));
    if (half) {
      st.sparse_f16.resize(n);
      if (!bytes.empty()) std::memcpy(st.sparse_f16.data(), bytes.data(), bytes.size());
    } else {
      st.sparse_f32.resize(n);
      if (!bytes.empty()) std::memcpy(st.sparse_f32.data(), bytes.data(), bytes.size());
    }
  }
  if (o.store_token_embeddings) {
    const std::uint64_t values = checked_mul(token_rows, o.token_dim, dir, "tokens");
    const std::uint64_t expected = checked_mul(slots, 8, dir, "tokens") + checked_mul(values, 4, dir, "tokens");
    const std::string bytes = read_section(dir, files, sections, "tokens", expected);
    Cursor cur(bytes, dir, "tokens.bin");
    std::vector<std::uint64_t> rows(slots);
    std::uint64_t total = 0;
    for (auto& r : rows) {
      r = cur.u64();
      if (r > token_rows - total) corrupt(dir, "tokens.bin row counts exceed the header's token_rows");
      total += r;
    }
    if (total != token_rows) corrupt(dir, "tokens.bin row counts do not sum to the header's token_rows");
    st.tokens.reserve(slots);
    for (std::uint64_t r : rows) {
      const float* p = reinterpret_cast<const float*>(cur.take(r * o.token_dim * 4));
      Matrix m(r, o.token_dim);
      if (r > 0) std::memcpy(m.data(), p, r * o.token_dim * 4);
      st.tokens.push_back(std::move(m));
    }
  }
  // ---- faiss ----
  if (trained) {
    const std::string bytes = read_section(dir, files, sections, "faiss", UINT64_MAX);
    faiss::VectorIOReader reader;
    reader.data.assign(bytes.begin(), bytes.end());
    std::unique_ptr<faiss::Index> index;
    try {
      index.reset(faiss::read_index(&reader));
    } catch (const faiss::FaissException& e) {
      corrupt(dir, std::string("faiss.bin cannot be read: ") + e.what());
    }
    bool right_type = false;
    switch (st.kind) {
      case IndexKind::kFlat:
        right_type = dynamic_cast<faiss::IndexFlatIP*>(index.get()) != nullptr;
        break;
      case IndexKind::kHnsw: {
        auto* h = dynamic_cast<faiss::IndexHNSWFlat*>(index.get());
        right_type = h != nullptr && dynamic_cast<faiss::IndexFlat*>(h->storage) != nullptr;
        break;
      }
      case IndexKind::kIvf:
        right_type = dynamic_cast<faiss::IndexIVFFlat*>(index.get()) != nullptr;
        break;
      case IndexKind::kIvfPq:
        right_type = dynamic_cast<faiss::IndexIVFPQ*>(index.get()) != nullptr;
        break;
    }
    if (!right_type) corrupt(dir, "faiss.bin does not hold a " + o.kind + " index");
    if (index->metric_type != faiss::METRIC_INNER_PRODUCT) corrupt(dir, "faiss.bin index does not use inner product");
    if (std::size_t(index->d) != o.dim) {
      corrupt(dir, "faiss.bin has dimension " + std::to_string(index->d) + ", header records " + std::to_string(o.dim));
    }
    if (std::uint64_t(index->ntotal) != slots) {
      corrupt(dir, "faiss.bin holds " + std::to_string(index->ntotal) + " vectors, header records " +
                       std::to_string(slots) + " slots");
    }
    st.faiss = std::move(index);
  } else {
    if (sections.contains("faiss")) corrupt(dir, "header.json lists a faiss section for an untrained index");
    st.faiss.reset();
  }
  return std::move(*built);
}

namespace storage_testing {

void set_storage_hook(std::function<void(StorageStep, const std::string&)> hook) { storage_hook() = std::move(hook); }
void refuse_exchange(bool refuse) { exchange_refused_for_tests = refuse; }

}  // namespace storage_testing

}  // namespace counterpoint::index
