// The three word splitters and what tells them apart: BM25's Unicode letter/digit runs, the
// near-miss builder's distinct ASCII words with inner apostrophes, word ablation's exact
// whitespace-separated words.
#include "counterpoint/text/words.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"

namespace counterpoint::text {
namespace {

using ::testing::ElementsAre;

TEST(AlphanumericWords, LowerCasedUnicodeLetterAndDigitRuns) {
  EXPECT_THAT(alphanumeric_words("Hello, WORLD-42 x_y"), ElementsAre("hello", "world", "42", "x", "y"));
  EXPECT_THAT(alphanumeric_words("Ärger über Ökonomie"), ElementsAre("ärger", "über", "ökonomie"));
  EXPECT_TRUE(alphanumeric_words(" ... ").empty());
}

TEST(AlphanumericWords, InvalidUtf8NamesTheByteOffset) {
  try {
    alphanumeric_words(std::string("ab\xff", 3));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("byte offset 2"));
  }
}

TEST(DistinctAsciiWords, KeepsApostrophesInsideWordsAndCountsEachWordOnce) {
  EXPECT_THAT(distinct_ascii_words("The dog's bone, the DOG'S bone"), ElementsAre("bone", "dog's", "the"));
  // An apostrophe joins a word once it has begun, so a closing quote stays on it.
  EXPECT_THAT(distinct_ascii_words("'bone'"), ElementsAre("bone'"));
  EXPECT_THAT(distinct_ascii_words("café au lait"), ElementsAre("au", "caf", "lait"));  // é separates
  EXPECT_TRUE(distinct_ascii_words("...").empty());
}

TEST(WhitespaceWords, SplitsOnWhitespaceOnlyAndKeepsWordsAsWritten) {
  EXPECT_THAT(whitespace_words("  Find an argument\tthat SUPPORTS:\n this claim. "),
              ElementsAre("Find", "an", "argument", "that", "SUPPORTS:", "this", "claim."));
  EXPECT_TRUE(whitespace_words(" \t\r\n").empty());
}

TEST(TrimBlanks, RemovesAsciiWhitespaceNulAndUnicodeSpacesAroundTheTextOnly) {
  EXPECT_EQ(trim_blanks(" \t\r\n\v\f claim  text \n"), "claim  text");
  EXPECT_EQ(trim_blanks("\xC2\xA0\xE3\x80\x80 claim\xC2\xA0" + std::string(1, '\0')), "claim");
  EXPECT_EQ(trim_blanks("a\xC2\xA0" "b"), "a\xC2\xA0" "b");
  EXPECT_EQ(trim_blanks(" \xE3\x80\x80 "), "");
  EXPECT_EQ(trim_blanks(""), "");
}

}  // namespace
}  // namespace counterpoint::text
