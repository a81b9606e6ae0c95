// Bad input to DocumentIndex that the main index tests do not already cover: zero vectors,
// non-finite Es and token rows, empty batches, every possible truncation and flipped byte of
// a saved index, saves that fail half-way or target a file, and implausible headers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/index/document_index.h"
#include "index_test_support.h"

namespace counterpoint::index {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

IndexOptions small_options() {
  IndexOptions o;
  o.dim = 4;
  o.sparse_dim = 3;
  o.store_token_embeddings = true;
  o.token_dim = 2;
  return o;
}

// Three documents (one removed) with every optional section, small enough to damage each byte.
DocumentIndex small_index() {
  DocumentIndex index(small_options());
  const Matrix dense(3, 4, std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f});
  const Matrix sparse(3, 3, std::vector<float>{1, 2, 3, 0, 1, 0, -1, 0.5f, 0});
  index.add({"cats attack", "dogs support", "birds"}, {"d0", "d1", "d2"}, dense, sparse,
            {Matrix(1, 2, 0.5f), Matrix(2, 2, 0.25f), Matrix(1, 2, -1.0f)});
  index.remove({"d1"});
  return index;
}

template <typename Exception, typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Exception& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

class IndexBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cp_index_badinput_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string dir(const std::string& name = "idx") const { return (root_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  // Replaces file `name` of the saved index with `bytes`, runs `check`, then restores it.
  void with_file(const std::string& name, const std::string& bytes, const std::function<void()>& check) {
    const std::string path = join_path(dir(), name);
    const std::string original = read_file(path);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    check();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << original;
  }
  void rewrite_header(const std::function<void(nlohmann::json&)>& edit) { test_support::rewrite_header(dir(), edit); }
  std::string load_error() const { return error_of<CorruptFile>([&] { DocumentIndex::load(dir()); }); }

  fs::path root_;
};

TEST(IndexVectors, ZeroRowsAreStoredAndScoreZeroAgainstAnyQuery) {
  IndexOptions o;
  o.dim = 3;
  DocumentIndex index(o);
  index.add({"", ""}, {"zero", "x"}, Matrix(2, 3, std::vector<float>{0, 0, 0, 2, 0, 0}));
  const SearchResult r = index.search(Matrix(1, 3, std::vector<float>{0, 1, 0}), 2);
  EXPECT_EQ(r.scores, (std::vector<float>{0.0f, 0.0f}));
  const float* stored = index.dense_row(*index.slot_of("zero"));
  EXPECT_EQ(std::vector<float>(stored, stored + 3), (std::vector<float>{0, 0, 0}));
  const SearchResult zero_query = index.search(Matrix(1, 3, 0.0f), 1);
  EXPECT_EQ(zero_query.scores, std::vector<float>{0.0f});
}

TEST(IndexVectors, NonFiniteSparseAndTokenRowsAreRejectedNamingThem) {
  DocumentIndex index(small_options());
  const Matrix dense(1, 4, 0.5f);
  Matrix sparse(1, 3, 0.1f);
  sparse(0, 1) = INFINITY;
  EXPECT_THAT(error_of<InvalidArgument>([&] { index.add({"t"}, {"a"}, dense, sparse, {Matrix(1, 2)}); }),
              HasSubstr("sparse embeddings"));
  Matrix tokens(2, 2, 0.1f);
  tokens(1, 0) = std::nanf("");
  EXPECT_THAT(error_of<InvalidArgument>([&] { index.add({"t"}, {"a"}, dense, Matrix(1, 3, 0.1f), {tokens}); }),
              HasSubstr("token embeddings of 'a'"));
  EXPECT_THAT(error_of<InvalidArgument>([&] { index.add({"t"}, {"a"}, dense, Matrix(1, 3, 0.1f), {Matrix(1, 5)}); }),
              HasSubstr("token embeddings of 'a'"));
  EXPECT_EQ(index.size(), 0u);
}

TEST(IndexVectors, EmptyBatchesChangeNothing) {
  DocumentIndex index = small_index();
  index.add({}, {}, Matrix(0, 4), Matrix(0, 3), {});
  EXPECT_EQ(index.slot_capacity(), 3u);
  EXPECT_EQ(index.size(), 2u);
  const SearchResult none = index.search(Matrix(0, 4), 5);
  EXPECT_EQ(none.num_queries, 0u);
  EXPECT_TRUE(none.slots.empty());
}

TEST(IndexVectors, AbsurdKIsRejectedBeforeAllocating) {
  DocumentIndex index = small_index();
  EXPECT_THAT(error_of<InvalidArgument>([&] { index.search(Matrix(2, 4, 0.5f), std::size_t(1) << 62); }),
              HasSubstr("is too large"));
}

// An id (or, without BM25, a text) that is not UTF-8, under matching checksums: refused at load,
// not loaded to fail as a UnicodeDecodeError at every ids() or text() in Python.
TEST_F(IndexBadInput, AnIdOrATextThatIsNotUtf8IsCorrupt) {
  const auto damage = [&](const std::string& from, const std::string& to) {
    std::string bytes = read_file(join_path(dir(), "documents.bin"));
    bytes.replace(bytes.find(from), from.size(), to);
    write_file_atomic(join_path(dir(), "documents.bin"), bytes);
    rewrite_header([&](nlohmann::json& h) { h["sections"]["documents"]["sha256"] = sha256_hex(bytes); });
  };
  small_index().save(dir());
  damage("d2", "d\xff");
  EXPECT_THAT(load_error(), HasSubstr("documents.bin: the id at slot 2 is not UTF-8"));
  IndexOptions options = small_options();
  options.build_bm25 = false;
  DocumentIndex plain(options);
  plain.add({"cats attack", "birds"}, {"d0", "d2"}, Matrix(2, 4, 0.5f), Matrix(2, 3, 0.5f),
            {Matrix(1, 2, 0.5f), Matrix(1, 2, 0.5f)});
  plain.save(dir());
  damage("birds", "bird\xff");
  EXPECT_THAT(load_error(), HasSubstr("documents.bin: the text of 'd2' is not UTF-8"));
}

TEST_F(IndexBadInput, EveryTruncationOfEveryFileIsCorrupt) {
  small_index().save(dir());
  std::size_t loads = 0;
  for (const std::string name : {"header.json", "documents.bin", "sparse.bin", "tokens.bin", "faiss.bin"}) {
    const std::string bytes = read_file(join_path(dir(), name));
    for (std::size_t keep = 0; keep < bytes.size(); ++keep) {
      with_file(name, bytes.substr(0, keep), [&] {
        const std::string error = load_error();
        ASSERT_THAT(error, HasSubstr("index " + dir() + ": ")) << name << " cut to " << keep;
        if (name != "header.json") {
          ASSERT_THAT(error, HasSubstr(name + " has " + std::to_string(keep) + " bytes"));
        }
        ++loads;
      });
    }
  }
  EXPECT_GT(loads, 500u);
  EXPECT_EQ(DocumentIndex::load(dir()).size(), 2u);  // every file restored
}

TEST_F(IndexBadInput, EveryFlippedByteOfEveryFileIsCorrupt) {
  small_index().save(dir());
  for (const std::string name : {"header.json", "documents.bin", "sparse.bin", "tokens.bin", "faiss.bin"}) {
    const std::string bytes = read_file(join_path(dir(), name));
    for (std::size_t at = 0; at < bytes.size(); ++at) {
      std::string damaged = bytes;
      damaged[at] = char(damaged[at] ^ (at % 2 ? 0x80 : 0x01));  // low and high bits alternately
      with_file(name, damaged, [&] {
        const std::string error = load_error();
        ASSERT_THAT(error, HasSubstr("index " + dir() + ": ")) << name << " byte " << at;
        if (name != "header.json") {
          ASSERT_THAT(error, HasSubstr(name + " fails its SHA-256 checksum"));
        }
      });
    }
  }
}

TEST_F(IndexBadInput, ASaveThatFailsHalfWayLeavesThePreviousIndexIntact) {
  small_index().save(dir());
  const std::string before = read_file(join_path(dir(), "header.json"));
  IndexOptions o;
  o.dim = 64;
  DocumentIndex big(o);
  Matrix rows(200, 64, 0.25f);
  std::vector<std::string> ids, texts;
  for (int i = 0; i < 200; ++i) ids.push_back("b" + std::to_string(i)), texts.push_back("text");
  big.add(texts, ids, rows);
  // Writes beyond 16 KiB fail with EFBIG, as on a full disk: faiss.bin (51 KiB) cannot be written.
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = saved;
  limited.rlim_cur = 16 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  const std::string error = error_of<IoError>([&] { big.save(dir()); });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, previous_handler);
  EXPECT_THAT(error, HasSubstr("cannot write"));
  EXPECT_THAT(error, HasSubstr("faiss.bin"));
  EXPECT_EQ(read_file(join_path(dir(), "header.json")), before);
  const DocumentIndex kept = DocumentIndex::load(dir());
  EXPECT_EQ(kept.size(), 2u);
  EXPECT_TRUE(kept.contains("d2"));
  EXPECT_EQ(entries(), std::vector<std::string>{"idx"});  // the half-written copy is gone
}

TEST_F(IndexBadInput, SavingOverARegularFileIsIoErrorAndKeepsTheFile) {
  write_file_atomic(dir("file"), "not an index");
  EXPECT_THAT(error_of<IoError>([&] { small_index().save(dir("file")); }),
              HasSubstr(dir("file") + " exists and is not a directory"));
  EXPECT_EQ(read_file(dir("file")), "not an index");
  EXPECT_EQ(entries(), std::vector<std::string>{"file"});
  EXPECT_THAT(error_of<InvalidArgument>([&] { small_index().save(""); }), HasSubstr("directory path is empty"));
}

TEST_F(IndexBadInput, LoadingAFileOrAnEmptyDirectoryFails) {
  write_file_atomic(dir("file"), "not an index");
  EXPECT_THAT(error_of<FileNotFound>([&] { DocumentIndex::load(dir("file")); }),
              HasSubstr("index path is not a directory: " + dir("file")));
  fs::create_directories(dir("empty"));
  EXPECT_THAT(error_of<CorruptFile>([&] { DocumentIndex::load(dir("empty")); }), HasSubstr("no header.json"));
}

// Regression: loading passed a null destination to memcpy for zero-length sections and
// zero-row token matrices (undefined behaviour that UBSan reports).
TEST_F(IndexBadInput, EmptyIndexesAndZeroRowDocumentsRoundTrip) {
  for (const std::string kind : {"flat", "ivf"}) {
    IndexOptions o = small_options();
    o.kind = kind;
    DocumentIndex(o).save(dir(kind));
    const DocumentIndex empty = DocumentIndex::load(dir(kind));
    EXPECT_EQ(empty.size(), 0u);
    EXPECT_EQ(empty.search(Matrix(1, 4, 0.5f), 2).slots, (std::vector<Slot>{-1, -1}));
  }
  DocumentIndex index(small_options());
  index.add({"", "x"}, {"none", "one"}, Matrix(2, 4, 0.5f), Matrix(2, 3, 0.1f), {Matrix(0, 2), Matrix(1, 2, 0.5f)});
  index.remove({"one"});
  index.save(dir());
  const DocumentIndex loaded = DocumentIndex::load(dir());
  EXPECT_EQ(loaded.token_embeddings(*loaded.slot_of("none")).rows, 0u);
  EXPECT_FALSE(loaded.contains("one"));
}

TEST_F(IndexBadInput, ImplausibleHeadersAreCorruptEvenWithAValidChecksum) {
  small_index().save(dir());
  const std::string good = read_file(join_path(dir(), "header.json"));
  const auto reset = [&] { write_file_atomic(join_path(dir(), "header.json"), good); };
  rewrite_header([](nlohmann::json& h) { h["options"]["sparse_dim"] = 1 << 21; });
  EXPECT_THAT(load_error(), HasSubstr("a width in header.json exceeds 1048576"));
  reset();
  rewrite_header([](nlohmann::json& h) { h["live"] = 4; });
  EXPECT_THAT(load_error(), HasSubstr("implausible document counts"));
  reset();
  rewrite_header([](nlohmann::json& h) { h["live"] = 3; });
  EXPECT_THAT(load_error(), HasSubstr("documents.bin holds 2 live documents, header records 3"));
  reset();
  rewrite_header([](nlohmann::json& h) { h["options"]["kind"] = "lsh"; });
  EXPECT_THAT(load_error(), HasSubstr("header.json holds invalid options"));
  reset();
  rewrite_header([](nlohmann::json& h) { h["options"]["dim"] = "four"; });
  EXPECT_THAT(load_error(), HasSubstr("header.json field 'dim' has the wrong type"));
  reset();
  rewrite_header([](nlohmann::json& h) { h["sections"]["documents"]["file"] = "../escape.bin"; });
  EXPECT_THAT(load_error(), HasSubstr("section 'documents' names an invalid file '../escape.bin'"));
  reset();
  rewrite_header([](nlohmann::json& h) { h["trained"] = false; });
  EXPECT_THAT(load_error(), HasSubstr("marks a flat index as untrained"));
  reset();
  rewrite_header([](nlohmann::json& h) { h.erase("sections"); });
  EXPECT_THAT(load_error(), HasSubstr("header.json lacks field 'sections'"));
  reset();
  EXPECT_EQ(DocumentIndex::load(dir()).size(), 2u);
}

// Fails at present: header fields read with nlohmann's get<int>/get<size_t> accept JSON floats
// by truncating them (1.5 -> 1), and out-of-range floats are undefined behaviour.
// 100,000 nested brackets (200 KB, under the header size cap) parsed, then crashed the stack when
// the checksum copied and dumped the document; they are refused while reading.
TEST_F(IndexBadInput, DeeplyNestedHeaderIsCorruptNotACrash) {
  small_index().save(dir());
  with_file("header.json", std::string(100000, '[') + std::string(100000, ']'), [&] {
    EXPECT_THAT(load_error(), HasSubstr("header.json:1:129: JSON nested deeper than 128 levels"));
  });
}

TEST_F(IndexBadInput, NonIntegralNumbersInTheHeaderAreCorrupt) {
  small_index().save(dir());
  const std::string good = read_file(join_path(dir(), "header.json"));
  rewrite_header([](nlohmann::json& h) { h["version"] = 1.5; });
  EXPECT_THAT(load_error(), HasSubstr("header.json field 'version' has the wrong type"));
  write_file_atomic(join_path(dir(), "header.json"), good);
  rewrite_header([](nlohmann::json& h) { h["options"]["dim"] = 4.5; });
  EXPECT_THAT(load_error(), HasSubstr("header.json field 'dim' has the wrong type"));
}

}  // namespace
}  // namespace counterpoint::index
