// Bad and unusual text at the tokenizer level that the per-tokenizer tests do not already
// cover: NUL bytes, control characters and whitespace-only input for the USE unigram
// tokenizer, mixed scripts with emoji, invalid UTF-8 in either segment of a pair, 100,000 tiny
// strings, and tokenizer files that are directories.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/text/tokenizer.h"
#include "counterpoint/text/use_unigram.h"
#include "counterpoint/text/wordpiece.h"
#include "message_of.h"
#include "text_test_support.h"

using namespace counterpoint;
using counterpoint::test_support::message_of;
using counterpoint::test_support::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Pieces = std::vector<std::string>;

namespace {

// Ids 0..5 reserved; 6 "▁ab", 7 "▁a", 8 "b", 9 "▁", 10 "😀", 11 "中".
UseUnigramTokenizer unigram() {
  return UseUnigramTokenizer({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {"r3", 0}, {"r4", 0}, {"r5", 0},
                              {"\u2581ab", -1.0}, {"\u2581a", -2.0}, {"b", -2.0}, {"\u2581", -3.0},
                              {"\U0001F600", -1.0}, {"\u4E2D", -1.0}});
}

// 0 [PAD], 1 [UNK], 2 [CLS], 3 [SEP], 4 [MASK], then whole words and continuations.
WordPieceTokenizer wordpiece() {
  return WordPieceTokenizer({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "cat", "\u4E2D", "\u6587",
                             "\U0001F600", "##e", "e", "\u043A\u043E\u0442", "\u0642\u0637"},
                            true);
}


}  // namespace

// NUL and control characters are ordinary unknown code points: never rejected or dropped.
// The lattice quirks listed in use_unigram.h decide the ids: here the unknown run takes over
// the piece before it ("▁a"), and adjacent unknowns collapse into one id 0.
TEST(UseUnigramBadInput, NulAndControlCharactersAreUnknownCodePoints) {
  const auto t = unigram();
  EXPECT_THAT(t.encode(std::string("a\0b", 3), 0).ids, ElementsAre(0, 8));
  EXPECT_THAT(t.encode("a\x01\x1F" "b", 0).ids, ElementsAre(0, 8));
  EXPECT_THAT(t.encode(std::string(1, '\0'), 0).ids, ElementsAre(0));
  EXPECT_THAT(t.encode("ab\x7F", 0).ids, ElementsAre(0));
}

TEST(UseUnigramBadInput, WhitespaceOnlyTextBecomesWordBoundaryPieces) {
  const auto t = unigram();
  EXPECT_THAT(t.encode("  ", 0).ids, ElementsAre(9, 9, 9));  // leading ▁ plus one per space
  EXPECT_THAT(t.encode("\t", 0).ids, ElementsAre(0));        // only U+0020 becomes ▁
}

// The back-trace steps back by UTF-16 length (use_unigram.h), so a piece outside the BMP
// (the emoji, two UTF-16 units) also covers the code point before it.
TEST(UseUnigramBadInput, MixedScriptsAndEmojiFollowTheUtf16BackTrace) {
  const auto t = unigram();
  EXPECT_THAT(t.encode("ab\u4E2D", 0).ids, ElementsAre(6, 11));
  EXPECT_THAT(t.encode("ab\u4E2D\U0001F600", 0).ids, ElementsAre(6, 10));
  EXPECT_THAT(t.encode("a\u0416\U0001F600", 0).ids, ElementsAre(7, 10));
}

TEST(WordPieceBadInput, MixedScriptsAndEmojiSplitIntoWords) {
  const auto t = wordpiece();
  // CJK ideographs become words of their own; é loses its accent; the emoji is not
  // punctuation, so "😀e" is one word made of "😀" + "##e".
  EXPECT_EQ(t.tokenize("Cat\u4E2D\u6587\U0001F600\u00E9"), (Pieces{"cat", "\u4E2D", "\u6587", "\U0001F600", "##e"}));
  EXPECT_EQ(t.tokenize("\u041A\u043E\u0442 \u0642\u0637 cat"), (Pieces{"\u043A\u043E\u0442", "\u0642\u0637", "cat"}));
  EXPECT_THAT(t.encode("\U0001F4A9", 0).ids, ElementsAre(2, 1, 3));  // unknown emoji is [UNK]
}

TEST(WordPieceBadInput, InvalidUtf8InEitherSegmentNamesItsOffset) {
  const auto t = wordpiece();
  EXPECT_THAT(message_of([&] { t.encode_pair("ca\xFF", "cat", 0); }), HasSubstr("invalid UTF-8 at byte offset 2"));
  EXPECT_THAT(message_of([&] { t.encode_pair("cat", "cat \xC3", 0); }), HasSubstr("invalid UTF-8 at byte offset 4"));
  EXPECT_THAT(message_of([&] { t.encode(std::string("cat\0\xFE", 5), 0); }),
              HasSubstr("invalid UTF-8 at byte offset 4"));
}

TEST(TokenizerBadInput, OneHundredThousandTinyStringsEncodeIndependently) {
  const auto wp = wordpiece();
  const auto uni = unigram();
  std::size_t wordpiece_ids = 0, unigram_ids = 0;
  for (int i = 0; i < 100000; ++i) {
    const std::string text = (i % 2) ? "cat" : "";
    wordpiece_ids += wp.encode(text, 8).ids.size();
    unigram_ids += uni.encode(i % 2 ? "ab" : "", 8).ids.size();
  }
  EXPECT_EQ(wordpiece_ids, 50000u * 3 + 50000u * 2);  // [CLS] cat [SEP] / [CLS] [SEP]
  EXPECT_EQ(unigram_ids, 50000u);                      // "▁ab" / nothing
}

TEST(TokenizerBadInput, TokenizerFileThatIsADirectoryIsRejected) {
  ScratchDir dir("badinput_dir");
  EXPECT_THAT(message_of([&] { load_tokenizer("wordpiece", dir.path()); }),
              HasSubstr("expected a file, found a directory: " + dir.path()));
  EXPECT_THAT(message_of([&] { load_tokenizer("use-unigram", dir.path()); }),
              HasSubstr("expected a file, found a directory: " + dir.path()));
}
