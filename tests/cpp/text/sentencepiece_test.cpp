#include "counterpoint/text/sentencepiece.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "text_test_support.h"

using namespace counterpoint;
using counterpoint::test_support::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

constexpr const char* kSpmTrain = "/usr/bin/spm_train";
constexpr const char* kSpmEncode = "/usr/bin/spm_encode";

const std::vector<std::string> kSentences = {
    "The death penalty deters crime and protects society.",
    "The death penalty does not deter crime; it only takes lives.",
    "Banning guns protects people from violence.",
    "Banning guns does not protect anyone from determined criminals.",
    "School uniforms reduce bullying in schools.",
    "School uniforms suppress the personal expression of students.",
    "Nuclear power is a clean source of energy.",
    "Nuclear power produces dangerous waste for thousands of years.",
};

// One model trained with spm_train for the whole suite (unigram, 80 pieces, <pad> = 3).
class SentencePiece : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!path_exists(kSpmTrain)) return;
    dir_ = new ScratchDir("spm");
    std::string corpus;
    for (int repeat = 0; repeat < 20; ++repeat) {
      for (const auto& s : kSentences) corpus += s + "\n";
    }
    write_file_atomic(dir_->file("corpus.txt"), corpus);
    std::string command = std::string(kSpmTrain) + " --input=" + dir_->file("corpus.txt") +
                          " --model_prefix=" + dir_->file("tiny") +
                          " --vocab_size=80 --model_type=unigram --pad_id=3 --minloglevel=2 > " +
                          dir_->file("train.log") + " 2>&1";
    trained_ = std::system(command.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!path_exists(kSpmTrain)) GTEST_SKIP() << kSpmTrain << " is missing (Debian package sentencepiece)";
    ASSERT_TRUE(trained_) << "spm_train failed: " << read_file(dir_->file("train.log"));
  }
  static std::string model() { return dir_->file("tiny.model"); }

  static ScratchDir* dir_;
  static bool trained_;
};
ScratchDir* SentencePiece::dir_ = nullptr;
bool SentencePiece::trained_ = false;

std::vector<int64_t> parse_ids(const std::string& line) {
  std::istringstream in(line);
  std::vector<int64_t> ids;
  for (int64_t id; in >> id;) ids.push_back(id);
  return ids;
}

}  // namespace

TEST_F(SentencePiece, GivesTheIdsOfSpmEncode) {
  const std::vector<std::string> texts = {"The death penalty protects society.",
                                          "Nuclear waste is not clean energy!", "Zebra quixotic",
                                          "  spaced   out  "};
  std::string input;
  for (const auto& t : texts) input += t + "\n";
  write_file_atomic(dir_->file("input.txt"), input);
  std::string command = std::string(kSpmEncode) + " --model=" + model() + " --output_format=id < " +
                        dir_->file("input.txt") + " > " + dir_->file("expected.txt");
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::istringstream expected(read_file(dir_->file("expected.txt")));

  SentencePieceTokenizer t(model());
  for (const auto& text : texts) {
    std::string line;
    ASSERT_TRUE(std::getline(expected, line));
    Encoding e = t.encode(text, 0);
    EXPECT_EQ(e.ids, parse_ids(line)) << "text: " << text;
    EXPECT_EQ(e.pieces.size(), e.ids.size());
    EXPECT_EQ(e.type_ids, std::vector<int64_t>(e.ids.size(), 0));
    EXPECT_FALSE(e.truncated);
  }
}

TEST_F(SentencePiece, ReportsVocabularyAndSpecialIds) {
  SentencePieceTokenizer t(model());
  EXPECT_EQ(t.vocab_size(), 80u);
  EXPECT_EQ(t.pad_id(), 3);
  EXPECT_EQ(t.unk_id(), 0);
  EXPECT_EQ(t.kind(), "sentencepiece");
  EXPECT_THAT(SentencePieceTokenizer::plugin_path(), HasSubstr("libcounterpoint_sentencepiece.so"));
  EXPECT_TRUE(t.encode("", 0).ids.empty());
}

TEST_F(SentencePiece, PiecesMarkWordStartsAndTruncationKeepsTheFirstIds) {
  SentencePieceTokenizer t(model());
  Encoding full = t.encode("The death penalty", 0);
  ASSERT_GT(full.ids.size(), 2u);
  EXPECT_EQ(full.pieces.front().rfind("\u2581", 0), 0u) << full.pieces.front();
  Encoding cut = t.encode("The death penalty", 2);
  EXPECT_THAT(cut.ids, ElementsAre(full.ids[0], full.ids[1]));
  EXPECT_TRUE(cut.truncated);
}

TEST_F(SentencePiece, InvalidUtf8IsRejectedAndPairsAreNotSupported) {
  SentencePieceTokenizer t(model());
  try {
    t.encode("death\xFE", 0);
    FAIL() << "invalid UTF-8 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("invalid UTF-8 at byte offset 5"));
  }
  EXPECT_THROW(t.encode_pair("a", "b", 0), InvalidArgument);
}

// SentencePiece itself runs at about 1 MB/s on one long line, so this stays at one megabyte.
TEST_F(SentencePiece, OneMegabyteOfTextEncodes) {
  SentencePieceTokenizer t(model());
  std::string text;
  while (text.size() < (1u << 20)) text += "The death penalty protects society. ";
  Encoding e = t.encode(text, 128);
  EXPECT_EQ(e.ids.size(), 128u);
  EXPECT_TRUE(e.truncated);
}

TEST(SentencePieceModelFile, DamagedModelIsCorruptAndMissingModelIsNotFound) {
  ScratchDir dir("spm_bad");
  write_file_atomic(dir.file("bad.model"), "this is not a protobuf model");
  try {
    SentencePieceTokenizer t(dir.file("bad.model"));
    FAIL() << "damaged model accepted";
  } catch (const CorruptFile& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.model: not a readable SentencePiece model"));
  }
  EXPECT_THROW(SentencePieceTokenizer(dir.file("absent.model")), FileNotFound);
}
