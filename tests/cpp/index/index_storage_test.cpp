// DocumentIndex::save/load: round trips for every kind, atomic replacement, and a clear
// CorruptFile/FileNotFound for every kind of damage.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/index/document_index.h"
#include "index_storage_hooks.h"
#include "index_test_support.h"
#include "message_of.h"

namespace counterpoint::index {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using counterpoint::test_support::message_of;
using test_support::params_for;
using test_support::random_rows;
using test_support::rewrite_header;

class IndexStorage : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("cp_index_storage_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A flat index with every optional section: Es in float16, token embeddings, BM25 with
  // stemming, one removed document.
  DocumentIndex full_index(const std::string& kind = "flat", std::size_t n = 40) {
    IndexOptions o;
    o.dim = 8;
    o.kind = kind;
    o.ivf_nlist = 4;
    o.pq_m = 4;
    o.pq_bits = 4;
    o.sparse_dim = 6;
    o.sparse_storage = IndexOptions::SparseStorage::kFloat16;
    o.store_token_embeddings = true;
    o.token_dim = 3;
    o.bm25 = {1.5f, 0.75f, true};
    DocumentIndex index(o);
    std::vector<std::string> ids, texts;
    std::vector<Matrix> tokens;
    for (std::size_t i = 0; i < n; ++i) {
      ids.push_back("doc-" + std::to_string(i));
      texts.push_back("Cats number " + std::to_string(i) + (i % 3 ? " attack" : " support"));
      tokens.push_back(random_rows(1 + i % 4, 3, 100 + unsigned(i)));
    }
    if (kind == "ivf" || kind == "ivfpq") index.train(random_rows(200, 8, 7));
    index.add(texts, ids, random_rows(n, 8, 1), random_rows(n, 6, 2), tokens);
    index.remove({"doc-3"});
    return index;
  }

  std::string dir(const std::string& name = "idx") const { return (root_ / name).string(); }

  static void expect_same(const DocumentIndex& a, const DocumentIndex& b) {
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(a.slot_capacity(), b.slot_capacity());
    EXPECT_EQ(a.live_slots(), b.live_slots());
    const Matrix queries = random_rows(5, a.options().dim, 9);
    const SearchParams params = params_for(a.options().kind, 64, 4);
    const SearchResult ra = a.search(queries, 7, params);
    const SearchResult rb = b.search(queries, 7, params);
    EXPECT_EQ(ra.slots, rb.slots);
    EXPECT_EQ(ra.scores, rb.scores);
    for (Slot s : a.live_slots()) {
      EXPECT_EQ(a.id(s), b.id(s));
      EXPECT_EQ(a.text(s), b.text(s));
      EXPECT_EQ(b.slot_of(a.id(s)), s);
      for (std::size_t c = 0; c < a.options().dim; ++c) EXPECT_EQ(a.dense_row(s)[c], b.dense_row(s)[c]);
      std::vector<float> sa(a.options().sparse_dim), sb(a.options().sparse_dim);
      a.gather_sparse(&s, 1, sa.data());
      b.gather_sparse(&s, 1, sb.data());
      EXPECT_EQ(sa, sb);
      const MatrixView ta = a.token_embeddings(s), tb = b.token_embeddings(s);
      ASSERT_EQ(ta.rows, tb.rows);
      EXPECT_TRUE(std::equal(ta.data, ta.data + ta.rows * ta.cols, tb.data));
    }
    EXPECT_EQ(a.options().bm25.k1, b.options().bm25.k1);
    EXPECT_EQ(a.options().bm25.stem, b.options().bm25.stem);
    const auto ha = a.search_bm25("cat attacks", 10), hb = b.search_bm25("cat attacks", 10);
    ASSERT_EQ(ha.size(), hb.size());
    for (std::size_t i = 0; i < ha.size(); ++i) {
      EXPECT_EQ(ha[i].slot, hb[i].slot);
      EXPECT_FLOAT_EQ(ha[i].score, hb[i].score);
    }
  }

  template <typename Exception>
  static std::string load_error(const std::string& d) {
    try {
      DocumentIndex::load(d);
    } catch (const Exception& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("wrong exception type: ") + e.what();
    }
    return "no exception";
  }

  fs::path root_;
};

TEST_F(IndexStorage, RoundTripsEveryKind) {
  for (const std::string kind : {"flat", "hnsw", "ivf", "ivfpq"}) {
    SCOPED_TRACE(kind);
    const DocumentIndex index = full_index(kind);
    index.save(dir(kind));
    const DocumentIndex loaded = DocumentIndex::load(dir(kind));
    EXPECT_EQ(loaded.options().kind, kind);
    EXPECT_TRUE(loaded.is_trained());
    expect_same(index, loaded);
  }
}

TEST_F(IndexStorage, RoundTripsAnUntrainedIvfIndex) {
  IndexOptions o;
  o.dim = 4;
  o.kind = "ivf";
  DocumentIndex index(o);
  index.add({"x", "y"}, {"a", "b"}, random_rows(2, 4, 3));
  index.save(dir());
  const DocumentIndex loaded = DocumentIndex::load(dir());
  EXPECT_FALSE(loaded.is_trained());
  EXPECT_EQ(loaded.search(random_rows(1, 4, 4), 2).slots, index.search(random_rows(1, 4, 4), 2).slots);
}

TEST_F(IndexStorage, SaveReplacesThePreviousIndexAndLeavesNoTemporaries) {
  full_index().save(dir());
  IndexOptions small_options;
  small_options.dim = 8;
  DocumentIndex small(small_options);
  small.add({"one"}, {"only"}, random_rows(1, 8, 5));
  small.save(dir());
  EXPECT_EQ(DocumentIndex::load(dir()).size(), 1u);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root_)) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"idx"});
}

TEST_F(IndexStorage, MissingDirectoryIsFileNotFound) {
  EXPECT_THAT(load_error<FileNotFound>(dir("absent")), HasSubstr("index directory not found"));
}

TEST_F(IndexStorage, DirectoryLeftByACrashedSaveDoesNotLoad) {
  full_index().save(dir("good"));
  // A save that died before writing its header: the sections exist, header.json does not.
  fs::create_directories(dir("crashed"));
  for (const auto& entry : fs::directory_iterator(dir("good"))) {
    if (entry.path().filename() != "header.json") fs::copy_file(entry.path(), fs::path(dir("crashed")) / entry.path().filename());
  }
  EXPECT_THAT(load_error<CorruptFile>(dir("crashed")), HasSubstr("no header.json"));
  // A header cut short mid-write.
  const std::string header = read_file(join_path(dir("good"), "header.json"));
  std::ofstream(join_path(dir("crashed"), "header.json")) << header.substr(0, header.size() / 2);
  EXPECT_THAT(load_error<CorruptFile>(dir("crashed")), HasSubstr("not valid JSON"));
}

// nlohmann's parser stops at a NUL byte: junk after one used to load silently.
TEST_F(IndexStorage, HeaderWithANulAndJunkAppendedIsCorrupt) {
  full_index().save(dir("good"));
  const std::string header_path = join_path(dir("good"), "header.json");
  std::ofstream(header_path, std::ios::app | std::ios::binary) << std::string("\0{\"junk\": 1}", 13);
  EXPECT_THAT(load_error<CorruptFile>(dir("good")), HasSubstr("NUL byte"));
}

TEST_F(IndexStorage, HeaderThatIsAFifoOrADirectoryIsNamedAsSuch) {
  full_index().save(dir("good"));
  const std::string header_path = join_path(dir("good"), "header.json");
  fs::remove(header_path);
  ASSERT_EQ(::mkfifo(header_path.c_str(), 0600), 0);
  EXPECT_THAT(load_error<CorruptFile>(dir("good")), HasSubstr("found a FIFO"));  // and did not block
  fs::remove(header_path);
  fs::create_directories(header_path);
  EXPECT_THAT(load_error<CorruptFile>(dir("good")), HasSubstr("found a directory"));
}

// A save killed part-way leaves its hidden working directory; the next save of the same index
// removes those of processes that no longer run, and leaves a running process's alone.
TEST_F(IndexStorage, ASaveRemovesWhatKilledSavesLeftBehind) {
  const fs::path stale = fs::path(root_) / ".idx.saving-999999999-0";
  const fs::path running = fs::path(root_) / (".idx.saving-" + std::to_string(::getpid()) + "-12345");
  const fs::path other_index = fs::path(root_) / ".other.saving-999999999-0";
  for (const auto& d : {stale, running, other_index}) fs::create_directories(d);
  full_index().save(dir("idx"));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(running));
  EXPECT_TRUE(fs::exists(other_index));
  EXPECT_EQ(DocumentIndex::load(dir("idx")).size(), 39u);
}

// "." is its own parent by name: the save used to make its working directory inside the index,
// fail to exchange or move ".", and leave a copy of the index inside it.
TEST_F(IndexStorage, SavingTheCurrentFolderAsDotReplacesItWhole) {
  const DocumentIndex first = full_index("flat", 10), second = full_index("flat", 20);
  first.save(dir());
  struct RestoreCurrentFolder {
    fs::path before = fs::current_path();
    ~RestoreCurrentFolder() { fs::current_path(before); }
  } restore;
  fs::current_path(dir());
  second.save(".");
  fs::current_path(restore.before);
  expect_same(second, DocumentIndex::load(dir()));
  std::vector<std::string> beside, inside;
  for (const auto& entry : fs::directory_iterator(root_)) beside.push_back(entry.path().filename().string());
  for (const auto& entry : fs::directory_iterator(dir())) inside.push_back(entry.path().filename().string());
  std::sort(inside.begin(), inside.end());
  EXPECT_EQ(beside, std::vector<std::string>{"idx"});
  EXPECT_EQ(inside, (std::vector<std::string>{"documents.bin", "faiss.bin", "header.json", "sparse.bin", "tokens.bin"}));
}

TEST_F(IndexStorage, TruncatedSectionsAreCorrupt) {
  full_index("ivf").save(dir("good"));
  for (const auto& entry : fs::directory_iterator(dir("good"))) {
    const std::string name = entry.path().filename().string();
    const std::string bytes = read_file(entry.path().string());
    for (const std::size_t keep : {std::size_t(0), std::size_t(1), bytes.size() / 2, bytes.size() - 1}) {
      SCOPED_TRACE(name + " cut to " + std::to_string(keep));
      fs::remove_all(dir("bad"));
      fs::copy(dir("good"), dir("bad"));
      std::ofstream(join_path(dir("bad"), name), std::ios::binary | std::ios::trunc) << bytes.substr(0, keep);
      const std::string error = load_error<CorruptFile>(dir("bad"));
      EXPECT_THAT(error, HasSubstr("index " + dir("bad") + ": "));
      if (name != "header.json") {
        EXPECT_THAT(error, HasSubstr(name + " has " + std::to_string(keep) + " bytes"));
      }
    }
  }
}

TEST_F(IndexStorage, AFlippedByteInAnySectionIsCorrupt) {
  full_index("hnsw").save(dir("good"));
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir("good"))) {
    ++files;
    const std::string name = entry.path().filename().string();
    const std::string bytes = read_file(entry.path().string());
    for (const std::size_t at : {std::size_t(0), bytes.size() / 3, bytes.size() - 2}) {
      SCOPED_TRACE(name + " byte " + std::to_string(at));
      fs::remove_all(dir("bad"));
      fs::copy(dir("good"), dir("bad"));
      std::string damaged = bytes;
      damaged[at] = char(damaged[at] ^ 0x01);
      std::ofstream(join_path(dir("bad"), name), std::ios::binary | std::ios::trunc) << damaged;
      const std::string error = load_error<CorruptFile>(dir("bad"));
      if (name == "header.json") {
        EXPECT_THAT(error, HasSubstr("header.json"));
      } else {
        EXPECT_THAT(error, HasSubstr(name + " fails its SHA-256 checksum"));
      }
    }
  }
  EXPECT_EQ(files, 5u);  // header, documents, sparse, tokens, faiss
}

TEST_F(IndexStorage, WrongFormatOrVersionIsCorrupt) {
  full_index().save(dir());
  rewrite_header(dir(), [](nlohmann::json& h) { h["version"] = 2; });
  EXPECT_THAT(load_error<CorruptFile>(dir()), HasSubstr("format version 2 is not supported"));
  rewrite_header(dir(), [](nlohmann::json& h) { h["version"] = 1; h["format"] = "something-else"; });
  EXPECT_THAT(load_error<CorruptFile>(dir()), HasSubstr("format 'something-else'"));
}

TEST_F(IndexStorage, DimensionMismatchIsCorrupt) {
  full_index("ivf").save(dir());
  rewrite_header(dir(), [](nlohmann::json& h) { h["options"]["dim"] = 16; });
  EXPECT_THAT(load_error<CorruptFile>(dir()), HasSubstr("section 'dense' records 1280 bytes but the header's counts imply 2560"));
  full_index("flat").save(dir());
  rewrite_header(dir(), [](nlohmann::json& h) { h["options"]["dim"] = 16; });
  EXPECT_THAT(load_error<CorruptFile>(dir()), HasSubstr("faiss.bin has dimension 8, header records 16"));
  full_index("flat").save(dir());
  rewrite_header(dir(), [](nlohmann::json& h) { h["slots"] = 1000000000000; });
  EXPECT_THAT(load_error<CorruptFile>(dir()), HasSubstr("is too short for 1000000000000 slots"));
}

TEST_F(IndexStorage, MissingSectionFileIsCorrupt) {
  full_index().save(dir());
  fs::remove(join_path(dir(), "tokens.bin"));
  EXPECT_THAT(load_error<CorruptFile>(dir()), HasSubstr("section file tokens.bin is missing"));
}

// Saving replaces the target folder whole: a folder of the user's own files (a thesis, a corpus,
// a model) is refused with nothing touched; an empty folder or an earlier index is replaced.
TEST_F(IndexStorage, SavingNeverReplacesAFolderThatIsNotAnIndex) {
  const DocumentIndex index = full_index();
  fs::create_directories(dir("mine"));
  std::ofstream(dir("mine") + "/thesis.txt") << "precious";
  EXPECT_THROW(index.save(dir("mine")), InvalidArgument);
  EXPECT_THROW(DocumentIndex::require_saveable(dir("mine")), InvalidArgument);
  EXPECT_EQ(read_file(dir("mine") + "/thesis.txt"), "precious");
  std::ofstream(dir("mine") + "/header.json") << R"({"format": "something else"})";
  EXPECT_THROW(index.save(dir("mine")), InvalidArgument);
  EXPECT_EQ(read_file(dir("mine") + "/thesis.txt"), "precious");

  fs::create_directories(dir("empty"));
  index.save(dir("empty"));
  index.save(dir("empty"));  // an index of this library is replaced
  expect_same(index, DocumentIndex::load(dir("empty")));
}

// Saves and loads of one folder at the same time (a search process reloading while another saves):
// a load sees the old index or the new one whole, never one's header with the other's sections.
// The hooks run the other side at each step of a save or of a load, so every interleaving that
// matters is reached on every run, not by chance.
class ConcurrentSave : public IndexStorage {
 protected:
  void TearDown() override {
    storage_testing::set_storage_hook(nullptr);
    storage_testing::refuse_exchange(false);
    IndexStorage::TearDown();
  }
  // A small index of `n` documents "<prefix>-i": the two versions differ in size and ids.
  static DocumentIndex version(const std::string& prefix, std::size_t n) {
    IndexOptions o;
    o.dim = 8;
    o.sparse_dim = 6;
    o.store_token_embeddings = true;
    o.token_dim = 3;
    DocumentIndex index(o);
    std::vector<std::string> ids, texts;
    std::vector<Matrix> tokens;
    for (std::size_t i = 0; i < n; ++i) {
      ids.push_back(prefix + "-" + std::to_string(i));
      texts.push_back(prefix + " text");
      tokens.push_back(random_rows(2, 3, unsigned(i)));
    }
    index.add(texts, ids, random_rows(n, 8, unsigned(n)), random_rows(n, 6, unsigned(n) + 1), tokens);
    return index;
  }
  // Which version a loaded index is, after checking it is that version whole.
  static std::string which(const DocumentIndex& loaded, const DocumentIndex& old_one, const DocumentIndex& new_one) {
    const DocumentIndex& expected = loaded.size() == old_one.size() ? old_one : new_one;
    expect_same(expected, loaded);
    return &expected == &old_one ? "old" : "new";
  }
  std::vector<std::string> leftovers() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(root_)) {
      if (entry.path().filename() != "idx") names.push_back(entry.path().filename().string());
    }
    return names;
  }

  void loads_at_every_step_of_a_save() {
    const DocumentIndex old_one = version("old", 5), new_one = version("new", 9);
    old_one.save(dir());
    std::map<storage_testing::StorageStep, std::string> seen;
    storage_testing::set_storage_hook([&](storage_testing::StorageStep step, const std::string&) {
      if (step == storage_testing::StorageStep::kSaveWritten || step == storage_testing::StorageStep::kSaveSwapped) {
        seen[step] = which(DocumentIndex::load(dir()), old_one, new_one);
      }
    });
    new_one.save(dir());
    storage_testing::set_storage_hook(nullptr);
    EXPECT_EQ(seen[storage_testing::StorageStep::kSaveWritten], "old");
    EXPECT_EQ(seen[storage_testing::StorageStep::kSaveSwapped], "new");
    EXPECT_EQ(which(DocumentIndex::load(dir()), old_one, new_one), "new");
  }

  // A load that has opened the old folder, and none of its files, when a whole save runs: the
  // folder it holds is removed, so it reads again, from the new index.
  void a_save_in_the_middle_of_a_load() {
    const DocumentIndex old_one = version("old", 5), new_one = version("new", 9);
    old_one.save(dir());
    int saves = 0;
    storage_testing::set_storage_hook([&](storage_testing::StorageStep step, const std::string&) {
      if (step == storage_testing::StorageStep::kLoadDirectoryOpened && saves++ == 0) new_one.save(dir());
    });
    const DocumentIndex loaded = DocumentIndex::load(dir());
    storage_testing::set_storage_hook(nullptr);
    EXPECT_EQ(saves, 2);  // the first load's directory was removed under it; the second read the new one
    EXPECT_EQ(which(loaded, old_one, new_one), "new");
  }

  // A load that holds the old index's files open when a whole save runs reads the old index,
  // whose files the save removed: what lets a load slower than a save finish (issue #62).
  void a_save_once_the_sections_are_open() {
    const DocumentIndex old_one = version("old", 5), new_one = version("new", 9);
    old_one.save(dir());
    int saves = 0;
    storage_testing::set_storage_hook([&](storage_testing::StorageStep step, const std::string&) {
      if (step == storage_testing::StorageStep::kLoadSectionsOpened && saves++ == 0) new_one.save(dir());
    });
    const DocumentIndex loaded = DocumentIndex::load(dir());
    storage_testing::set_storage_hook(nullptr);
    EXPECT_EQ(saves, 1);
    EXPECT_EQ(which(loaded, old_one, new_one), "old");
    EXPECT_EQ(which(DocumentIndex::load(dir()), old_one, new_one), "new");
  }

  // A load overtaken by a save at every attempt stops, after a bounded number, with an IoError
  // that says so: it never waits on saves without end.
  void a_save_at_every_attempt_of_a_load() {
    const DocumentIndex one = version("one", 5), other = version("other", 9);
    one.save(dir());
    int saves = 0;
    storage_testing::set_storage_hook([&](storage_testing::StorageStep step, const std::string&) {
      if (step == storage_testing::StorageStep::kLoadDirectoryOpened) (saves++ % 2 ? one : other).save(dir());
    });
    EXPECT_EQ(message_of<IoError>([&] { DocumentIndex::load(dir()); }),
              "index " + dir() +
                  " was replaced by another save while being read, 32 times in a row; load it again (last: index " +
                  dir() + ": no header.json (not a saved index, or a save that did not finish))");
    storage_testing::set_storage_hook(nullptr);
    EXPECT_EQ(saves, 32);
  }
};

TEST_F(ConcurrentSave, ALoadAtEveryStepOfASaveSeesTheOldOrTheNewIndexWhole) {
  loads_at_every_step_of_a_save();
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
  EXPECT_FALSE(fs::is_symlink(dir()));
}

TEST_F(ConcurrentSave, ALoadThatASaveOvertakesReadsTheNewIndexNotAMix) {
  a_save_in_the_middle_of_a_load();
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

TEST_F(ConcurrentSave, ALoadHoldingTheOldSectionsReadsTheOldIndexWholeThoughASaveRemovedIt) {
  a_save_once_the_sections_are_open();
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

TEST_F(ConcurrentSave, ALoadOvertakenAtEveryAttemptStopsWithAnIoError) { a_save_at_every_attempt_of_a_load(); }

// Without an exchange a save killed between its steps leaves a version directory not yet linked
// in, or a link not yet renamed into place: the next save removes those of processes that no
// longer run, but never the version the folder links to, whoever saved it.
TEST_F(ConcurrentSave, WithoutAnExchangeASaveRemovesWhatKilledSavesLeftBehind) {
  storage_testing::refuse_exchange(true);
  const DocumentIndex old_one = version("old", 5), new_one = version("new", 9);
  old_one.save(dir());
  old_one.save(dir());  // the first save makes a plain folder, the second the link
  const std::string saved_by_a_dead_process = ".idx.version-999999999-0";
  fs::rename(root_ / fs::read_symlink(dir()), root_ / saved_by_a_dead_process);
  fs::remove(dir());
  fs::create_directory_symlink(saved_by_a_dead_process, dir());
  fs::create_directories(root_ / ".idx.version-999999999-1");
  fs::create_directory_symlink(".idx.version-999999999-1", root_ / ".idx.link-999999999-1");
  // Left by a dead process over an hour ago; a younger one may be another host's save in progress.
  for (const char* name : {".idx.version-999999999-1", ".idx.link-999999999-1"}) {
    const struct timespec two_hours_ago[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (root_ / name).c_str(), two_hours_ago, AT_SYMLINK_NOFOLLOW), 0);
  }
  const std::string another_hosts = ".idx.version-999999999-2";
  fs::create_directories(root_ / another_hosts);
  const std::string running = ".idx.version-" + std::to_string(::getpid()) + "-99999";
  fs::create_directories(root_ / running);
  std::string seen_before_the_swap;
  storage_testing::set_storage_hook([&](storage_testing::StorageStep step, const std::string&) {
    if (step == storage_testing::StorageStep::kSaveWritten) seen_before_the_swap = which(DocumentIndex::load(dir()), old_one, new_one);
  });
  new_one.save(dir());
  storage_testing::set_storage_hook(nullptr);
  EXPECT_EQ(seen_before_the_swap, "old");
  EXPECT_EQ(which(DocumentIndex::load(dir()), old_one, new_one), "new");
  std::vector<std::string> left = leftovers();
  std::sort(left.begin(), left.end());
  std::vector<std::string> expected{fs::read_symlink(dir()).string(), another_hosts, running};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(left, expected);
}

// File systems without RENAME_EXCHANGE: the folder becomes a link to a version directory, and
// later saves replace the link in one step.
TEST_F(ConcurrentSave, WithoutAnExchangeTheVersionIndirectionKeepsLoadsWhole) {
  storage_testing::refuse_exchange(true);
  loads_at_every_step_of_a_save();
  EXPECT_TRUE(fs::is_symlink(dir()));
  EXPECT_EQ(leftovers().size(), 1u);  // the version the link names
  loads_at_every_step_of_a_save();    // the link replaced by a link
  a_save_in_the_middle_of_a_load();
  a_save_once_the_sections_are_open();
  a_save_at_every_attempt_of_a_load();
  ASSERT_EQ(leftovers().size(), 1u);
  EXPECT_EQ(fs::read_symlink(dir()).string(), leftovers().front());
  // A folder that is the user's link to their own index elsewhere keeps that index.
  const DocumentIndex elsewhere = version("theirs", 3);
  elsewhere.save(dir("theirs"));
  fs::remove(dir());
  fs::create_directory_symlink("theirs", dir());
  version("mine", 4).save(dir());
  EXPECT_EQ(DocumentIndex::load(dir()).size(), 4u);
  EXPECT_EQ(DocumentIndex::load(dir("theirs")).size(), 3u);
}

}  // namespace
}  // namespace counterpoint::index
