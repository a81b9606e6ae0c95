#include "counterpoint/text/use_unigram.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "text_test_support.h"

using namespace counterpoint;
using counterpoint::test_support::env_or_empty;
using counterpoint::test_support::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// Ids 0..5 are reserved. The expected ids in these tests were checked against the original
// JavaScript tokenizer run with node on this same vocabulary.
const char* const kToyVocab = R"([["\ufffd",0],["<s>",0],["</s>",0],["x1",0],["x2",0],["x3",0],
 ["\u2581ab",-1.0],["\u2581a",-2.0],["b",-2.0],["\u2581",-3.0],["a",-1.5],
 ["\u2581x",-2.0],["y",-2.0],["\u2581xy",-4.0],["x",-5.0],
 ["\u2581q",null],["q",-1.0],
 ["z",-1.0],["z",-1.5],
 ["\ud83d\ude00",-1.0],
 ["fi",-0.5]])";

UseUnigramTokenizer toy(const ScratchDir& dir) {
  write_file_atomic(dir.file("vocab.json"), kToyVocab);
  return UseUnigramTokenizer::from_file(dir.file("vocab.json"));
}

std::vector<int64_t> ids(const Tokenizer& t, std::string_view text) { return t.encode(text, 0).ids; }

std::string use_lite_vocab() {
  std::string dir = env_or_empty("COUNTERPOINT_USE_LITE_DIR");
  std::string path = join_path(dir.empty() ? COUNTERPOINT_SOURCE_DIR "/models/installed/use-lite-en" : dir, "vocab.json");
  return path_exists(path) ? path : std::string();
}

}  // namespace

TEST(UseUnigram, PicksTheBestScoringSegmentation) {
  ScratchDir dir("use_best");
  auto t = toy(dir);
  EXPECT_THAT(ids(t, "ab"), ElementsAre(6));        // "▁ab" (-1) beats "▁a"+"b" (-4)
  EXPECT_THAT(ids(t, "a b"), ElementsAre(7, 9, 8));  // spaces become "▁"
  Encoding e = t.encode("ab", 0);
  EXPECT_THAT(e.pieces, ElementsAre("\u2581ab"));
  EXPECT_THAT(e.type_ids, ElementsAre(0));
}

TEST(UseUnigram, EqualScoresGoToTheLaterStartingPiece) {
  ScratchDir dir("use_tie");
  // "▁xy" (-4) and "▁x"+"y" (-2-2) tie; the original's >= prefers the later candidate.
  EXPECT_THAT(ids(toy(dir), "xy"), ElementsAre(11, 12));
}

TEST(UseUnigram, ABestOfExactlyZeroCountsAsUnsetAndNullScoresAsZero) {
  ScratchDir dir("use_zero");
  // "▁q" has a null score: its path scores 0, which the next candidate ("▁"+"q", -4) replaces.
  EXPECT_THAT(ids(toy(dir), "q"), ElementsAre(9, 16));
}

TEST(UseUnigram, UnknownCodePointsBecomeIdZeroAndRunsCollapse) {
  ScratchDir dir("use_unk");
  auto t = toy(dir);
  EXPECT_THAT(ids(t, "\u00E9\u20AC"), ElementsAre(9, 0));
  EXPECT_THAT(ids(t, "\u00E9\u00E9 a"), ElementsAre(9, 0, 7));
}

TEST(UseUnigram, RepeatedPieceTakesItsLastId) {
  ScratchDir dir("use_dup");
  EXPECT_THAT(ids(toy(dir), "z"), ElementsAre(9, 18));
}

TEST(UseUnigram, BackTraceStepsByUtf16LengthLikeTheOriginal) {
  ScratchDir dir("use_utf16");
  // The astral piece is one code point but two UTF-16 units, so the "▁" before it is skipped.
  EXPECT_THAT(ids(toy(dir), "\U0001F600"), ElementsAre(19));
}

TEST(UseUnigram, NormalizesWithNfkc) {
  ScratchDir dir("use_nfkc");
  // U+FB01 (ﬁ) -> "fi"; "f" alone starts no finished piece, so the original falls to id 0.
  EXPECT_THAT(ids(toy(dir), "\uFB01"), ElementsAre(9, 0));
}

TEST(UseUnigram, EmptyTextGivesNoIdsAndTruncationKeepsTheFirstIds) {
  ScratchDir dir("use_trunc");
  auto t = toy(dir);
  EXPECT_TRUE(ids(t, "").empty());
  Encoding e = t.encode("a b a b", 3);
  EXPECT_THAT(e.ids, ElementsAre(7, 9, 8));
  EXPECT_EQ(e.pieces.size(), 3u);
  EXPECT_TRUE(e.truncated);
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.vocab_size(), 21u);
  EXPECT_EQ(t.kind(), "use-unigram");
  EXPECT_THROW(t.encode_pair("a", "b", 0), InvalidArgument);
}

TEST(UseUnigram, InvalidUtf8IsRejectedWithItsByteOffset) {
  ScratchDir dir("use_utf8");
  auto t = toy(dir);
  try {
    t.encode("ab\xC3", 0);
    FAIL() << "invalid UTF-8 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("invalid UTF-8 at byte offset 2"));
  }
}

TEST(UseUnigram, BrokenVocabulariesAreReportedAsCorrupt) {
  ScratchDir dir("use_bad");
  auto expect_corrupt = [&](const std::string& json, const std::string& message) {
    write_file_atomic(dir.file("v.json"), json);
    try {
      UseUnigramTokenizer::from_file(dir.file("v.json"));
      ADD_FAILURE() << "accepted " << json;
    } catch (const CorruptFile& e) {
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  };
  expect_corrupt("[[\"a\", 1", "not valid JSON");
  expect_corrupt("{\"a\": 1}", "expected a JSON array");
  expect_corrupt(R"([["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],["g","x"]])", "entry 6 is not [piece, score]");
  expect_corrupt(R"([["a",0],["b",0],["c",0]])", "3 pieces, but ids 0..5 are reserved");
  expect_corrupt(R"([["",0],["b",0],["c",0],["d",0],["e",0],["f",0],["g",0]])", "piece 0 (the unknown piece) is empty");
  EXPECT_THROW(UseUnigramTokenizer::from_file(dir.file("absent.json")), FileNotFound);
}

// A quadratic step or a recursion per character would not finish (or overflow the stack) here.
TEST(UseUnigram, TenMegabytesOfTextTokenize) {
  ScratchDir dir("use_large");
  auto t = toy(dir);
  std::string text;
  while (text.size() < (10u << 20)) text += "ab xy q ";
  Encoding e = t.encode(text, 0);
  // "▁ab ▁x y ▁q" per repetition, then the trailing "▁".
  EXPECT_EQ(e.ids.size(), 4u * (text.size() / 8) + 1);
  EXPECT_THAT(std::vector<int64_t>(e.ids.end() - 5, e.ids.end()), ElementsAre(6, 11, 12, 15, 9));
}

// ---- the real USE-lite vocabulary --------------------------------------------------------------

TEST(UseUnigramUseLite, MatchesTheJavaScriptTokenizerOnHandPickedStrings) {
  std::string vocab = use_lite_vocab();
  if (vocab.empty()) GTEST_SKIP() << "USE-lite vocab.json not installed (models/install.sh or COUNTERPOINT_USE_LITE_DIR)";
  auto t = UseUnigramTokenizer::from_file(vocab);
  EXPECT_EQ(t.vocab_size(), 8000u);
  auto expected = nlohmann::json::parse(read_file(COUNTERPOINT_TEST_DATA_DIR "/text/use_unigram_expected.json"));
  ASSERT_GE(expected["cases"].size(), 12u);
  for (const auto& c : expected["cases"]) {
    std::string text = c["text"];
    EXPECT_EQ(t.encode(text, 0).ids, c["ids"].get<std::vector<int64_t>>()) << "text: " << text;
  }
}

TEST(UseUnigramUseLite, MatchesTheGoldenIdsOfEverySentence) {
  std::string vocab = use_lite_vocab();
  if (vocab.empty()) GTEST_SKIP() << "USE-lite vocab.json not installed (models/install.sh or COUNTERPOINT_USE_LITE_DIR)";
  std::string golden_path = COUNTERPOINT_TEST_DATA_DIR "/use_lite_golden.json";
  if (!path_exists(golden_path)) GTEST_SKIP() << golden_path << " is missing";
  auto t = UseUnigramTokenizer::from_file(vocab);
  auto golden = nlohmann::json::parse(read_file(golden_path));
  ASSERT_FALSE(golden["sentences"].empty());
  for (const auto& s : golden["sentences"]) {
    std::string text = s["text"];
    EXPECT_EQ(t.encode(text, 0).ids, s["ids"].get<std::vector<int64_t>>()) << "text: " << text;
  }
}
