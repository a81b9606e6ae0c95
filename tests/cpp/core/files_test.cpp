// The one output rule (require_safe_output) and write_file_atomic's refusal to replace what is
// not a regular file: outputs onto inputs of the same command, into an input folder, or onto a
// device, FIFO or folder destroyed the user's files while reporting success.
#include "counterpoint/core/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "counterpoint/core/errors.h"

using namespace counterpoint;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

class OutputRule : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("cp_output_rule_" + std::to_string(::getpid()) + "_" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "beir");
    write_file_atomic(path("beir/corpus.jsonl"), "{\"_id\": \"d\", \"text\": \"t\"}\n");
    write_file_atomic(path("queries.jsonl"), "{\"_id\": \"q\", \"text\": \"t\"}\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string path(const std::string& name) const { return (root_ / name).string(); }
  template <typename Fn>
  static std::string refusal(Fn&& fn) {
    try {
      fn();
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "accepted";
  }
  fs::path root_;
};

TEST_F(OutputRule, AnOutputOntoAnInputIsRefusedUnderAnySpelling) {
  const std::vector<NamedInput> inputs = {{"--queries", path("queries.jsonl")}, {"--corpus", path("beir")}};
  EXPECT_EQ(refusal([&] { require_safe_output(path("queries.jsonl"), "--trec", inputs); }),
            "--trec " + path("queries.jsonl") + " is the input --queries " + path("queries.jsonl") +
                "; writing it would destroy the input: choose another path");
  EXPECT_THAT(refusal([&] { require_safe_output(path("beir/../queries.jsonl"), "--out", inputs); }),
              HasSubstr("is the input --queries"));
  fs::create_symlink(path("queries.jsonl"), path("link.jsonl"));
  EXPECT_THAT(refusal([&] { require_safe_output(path("link.jsonl"), "--out", inputs); }),
              HasSubstr("is the input --queries"));
  EXPECT_EQ(refusal([&] { require_safe_output(path("run.trec"), "--trec", inputs); }), "accepted");
}

TEST_F(OutputRule, AnExistingFileInsideAnInputFolderIsRefusedANewOneIsNot) {
  const std::vector<NamedInput> inputs = {{"--corpus", path("beir")}};
  EXPECT_THAT(refusal([&] { require_safe_output(path("beir/corpus.jsonl"), "--out", inputs); }),
              HasSubstr("--out " + path("beir/corpus.jsonl") + " is inside the input --corpus " + path("beir")));
  EXPECT_EQ(refusal([&] { require_safe_output(path("beir/inverted.jsonl"), "--out", inputs); }), "accepted");
}

TEST_F(OutputRule, AFolderOutputMayNotBeOrHoldAnInput) {
  EXPECT_THAT(refusal([&] { require_safe_output(path("beir"), "--out", {{"--base", path("beir")}}, OutputKind::kFolder); }),
              HasSubstr("is the input --base"));
  EXPECT_THAT(refusal([&] {
                require_safe_output(path("beir"), "--out", {{"--corpus", path("beir/corpus.jsonl")}}, OutputKind::kFolder);
              }),
              HasSubstr("--out " + path("beir") + " holds the input --corpus " + path("beir/corpus.jsonl")));
  EXPECT_THAT(refusal([&] { require_safe_output(path("queries.jsonl"), "--out", {}, OutputKind::kFolder); }),
              HasSubstr("is a file, not a folder"));
  EXPECT_EQ(refusal([&] { require_safe_output(path("beir/index"), "--out", {{"--corpus", path("beir")}}, OutputKind::kFolder); }),
            "accepted");
}

TEST_F(OutputRule, ADeviceAFifoOrAFolderIsNeverReplacedByAFile) {
  EXPECT_EQ(refusal([&] { require_safe_output("/dev/null", "--trec", {}); }),
            "--trec /dev/null is a character device, not a regular file; writing there would replace it: choose "
            "another path");
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_THAT(refusal([&] { require_safe_output(path("fifo"), "--out", {}); }), HasSubstr("is a FIFO"));
  EXPECT_THAT(refusal([&] { require_safe_output(path("beir"), "--out", {}); }), HasSubstr("is a directory"));
  // The writer itself holds the same line, for callers that check nothing first.
  EXPECT_THAT(refusal([&] { write_file_atomic(path("fifo"), "x"); }), HasSubstr("it is a FIFO"));
  EXPECT_TRUE(fs::is_fifo(path("fifo")));
  EXPECT_THAT(refusal([&] { write_file_atomic("/dev/null", "x"); }), HasSubstr("it is a character device"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

// A file output's folder must exist before any work; the writer's own temporary file is never
// what a failure names.
TEST_F(OutputRule, AFileOutputIntoAMissingFolderIsRefusedFirst) {
  EXPECT_THROW(require_safe_output(path("no-such-folder") + "/run.trec", "--trec", {}), FileNotFound);
  try {
    require_safe_output(path("no-such-folder") + "/run.trec", "--trec", {});
  } catch (const FileNotFound& e) {
    EXPECT_EQ(std::string(e.what()), "--trec: folder " + path("no-such-folder") + " does not exist");
  }
  require_safe_output(path("run.trec"), "--trec", {});  // a new file in an existing folder
  require_safe_output(path("new/index"), "--out", {}, OutputKind::kFolder);  // folders are made with parents
}

// The temporary file beside the target is the writer's own: a failure names the file asked for.
TEST_F(OutputRule, AFileIntoAMissingFolderNamesTheFolderNotTheTemporaryFile) {
  const std::string target = path("no-such-folder") + "/run.trec";
  try {
    write_file_atomic(target, "x");
    FAIL() << "wrote into a missing folder";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + target + ": folder " + path("no-such-folder") +
                                         " does not exist");
  }
}

}  // namespace
