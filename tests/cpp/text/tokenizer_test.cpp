#include "counterpoint/text/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "text_test_support.h"

using namespace counterpoint;
using counterpoint::test_support::ScratchDir;
using counterpoint::test_support::write_lines;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LoadTokenizer, BuildsTheKindNamedInTheManifest) {
  ScratchDir dir("factory");
  auto vocab_txt = write_lines(dir, "vocab.txt", {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello"});
  auto wordpiece = load_tokenizer("wordpiece", vocab_txt);
  EXPECT_EQ(wordpiece->kind(), "wordpiece");
  EXPECT_THAT(wordpiece->encode("HELLO", 0).ids, ElementsAre(2, 4, 3));
  auto cased = load_tokenizer("wordpiece", vocab_txt, /*lowercase=*/false);
  EXPECT_THAT(cased->encode("HELLO", 0).ids, ElementsAre(2, 1, 3));

  write_file_atomic(dir.file("vocab.json"),
                    R"([["<unk>",0],["<s>",0],["</s>",0],["x",0],["y",0],["z",0],
                       ["\u2581ab",-1],["\u2581",-3],["a",-2],["b",-2]])");
  auto unigram = load_tokenizer("use-unigram", dir.file("vocab.json"));
  EXPECT_EQ(unigram->kind(), "use-unigram");
  EXPECT_THAT(unigram->encode("ab", 0).ids, ElementsAre(6));
}

TEST(LoadTokenizer, UnknownKindListsTheKnownOnes) {
  try {
    load_tokenizer("bpe", "/nonexistent");
    FAIL() << "unknown kind accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown tokenizer kind \"bpe\" (known kinds: wordpiece, use-unigram, sentencepiece)"));
  }
}

TEST(LoadTokenizer, SpecialTokensForAKindThatReadsItsOwnAreRefused) {
  SpecialTokens specials;
  specials.cls = "<s>";
  try {
    load_tokenizer("use-unigram", "/nonexistent/vocab.json", true, specials);
    FAIL() << "specials for use-unigram accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("tokenizer kind \"use-unigram\" takes its special tokens from /nonexistent/vocab.json"));
  }
}

TEST(LoadTokenizer, MissingFilesAreNotFound) {
  EXPECT_THROW(load_tokenizer("wordpiece", "/nonexistent/vocab.txt"), FileNotFound);
  EXPECT_THROW(load_tokenizer("use-unigram", "/nonexistent/vocab.json"), FileNotFound);
  EXPECT_THROW(load_tokenizer("sentencepiece", "/nonexistent/spm.model"), FileNotFound);
}
