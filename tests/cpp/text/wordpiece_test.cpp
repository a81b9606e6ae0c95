#include "counterpoint/text/wordpiece.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"
#include "text_test_support.h"

using namespace counterpoint;
using counterpoint::test_support::env_or_empty;
using counterpoint::test_support::ScratchDir;
using counterpoint::test_support::write_lines;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Pieces = std::vector<std::string>;

namespace {

// The toy vocabulary of Hugging Face's BERT tokenizer tests (ids = positions).
const Pieces kToyVocab = {"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "want", "##want", "##ed",
                          "wa",    "un",    "runn",  "##ing", ",",     "low",  "lowest"};

WordPieceTokenizer toy(bool lowercase = true) { return WordPieceTokenizer(kToyVocab, lowercase); }

// A vocabulary that holds every piece the basic-tokenizer tests produce, so that they show
// the words themselves rather than [UNK].
WordPieceTokenizer words_vocab(bool lowercase, Pieces extra) {
  Pieces v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  v.insert(v.end(), extra.begin(), extra.end());
  return WordPieceTokenizer(v, lowercase);
}

}  // namespace

TEST(WordPiece, SplitsUnknownCaseAndAccentsLikeTheHuggingFaceExample) {
  auto t = toy();
  EXPECT_EQ(t.tokenize("UNwant\u00E9d,running"), (Pieces{"un", "##want", "##ed", ",", "runn", "##ing"}));
  Encoding e = t.encode("UNwant\u00E9d,running", 0);
  EXPECT_THAT(e.ids, ElementsAre(1, 9, 6, 7, 12, 10, 11, 2));
  EXPECT_THAT(e.type_ids, ElementsAre(0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(e.pieces, ElementsAre("[CLS]", "un", "##want", "##ed", ",", "runn", "##ing", "[SEP]"));
  EXPECT_FALSE(e.truncated);
}

TEST(WordPiece, WordWithAnUnmatchedRemainderBecomesOneUnknown) {
  auto t = toy();
  EXPECT_EQ(t.tokenize("unwanted running"), (Pieces{"un", "##want", "##ed", "runn", "##ing"}));
  EXPECT_EQ(t.tokenize("unwantedX running"), (Pieces{"[UNK]", "runn", "##ing"}));
}

TEST(WordPiece, LongestMatchWinsOverShorterPrefix) {
  auto t = toy();
  EXPECT_EQ(t.tokenize("lowest low"), (Pieces{"lowest", "low"}));
}

TEST(WordPiece, EmptyAndBlankTextGiveOnlyTheSpecialTokens) {
  auto t = toy();
  EXPECT_TRUE(t.tokenize("").empty());
  EXPECT_THAT(t.encode("", 0).ids, ElementsAre(1, 2));
  EXPECT_THAT(t.encode(" \t\n\r ", 0).ids, ElementsAre(1, 2));
}

TEST(WordPiece, LowerCasesSplitsPunctuationAndWhitespace) {
  auto t = words_vocab(true, {"hello", "!", "how", "are", "you", "?"});
  EXPECT_EQ(t.tokenize(" \tHeLLo!how  \n Are yoU?  "), (Pieces{"hello", "!", "how", "are", "you", "?"}));
  EXPECT_EQ(t.tokenize("H\u00E9llo"), (Pieces{"hello"}));
}

TEST(WordPiece, CasedVocabularyKeepsCaseAndAccents) {
  auto t = words_vocab(false, {"HeLLo", "H\u00E4LLo", "!", "how", "Are", "yoU", "?"});
  EXPECT_EQ(t.tokenize(" \tHeLLo!how  \n Are yoU?  "), (Pieces{"HeLLo", "!", "how", "Are", "yoU", "?"}));
  // Decomposed input is composed (NFC) first, so it matches the composed piece.
  EXPECT_EQ(t.tokenize("Ha\u0308LLo"), (Pieces{"H\u00E4LLo"}));
}

TEST(WordPiece, StripsEveryCombiningMarkWhenLowerCasing) {
  auto t = words_vocab(true, {"cafe", "naive", "resume", "zoe"});
  EXPECT_EQ(t.tokenize("Caf\u00E9 NA\u00CFVE r\u00E9sum\u00E9 Zoe\u0308"), (Pieces{"cafe", "naive", "resume", "zoe"}));
}

// Hugging Face's tokenizers lower-case each code point alone (tokenizers 0.19.1 and transformers
// 4.40.2's slow BertTokenizer: ΟΔΟΣ. ΣΑΣ -> ο ##δ ##ο ##σ . σ ##α ##σ with bert-base-uncased), where
// Python's str.lower() would end both words in ς.
TEST(WordPiece, CapitalSigmaLowerCasesToSigmaEvenAtTheEndOfAWord) {
  auto t = words_vocab(true, {"\u03BF\u03B4\u03BF\u03C3", "\u03BF\u03B4\u03BF\u03C2", "\u03C3\u03B1", "\u03C3\u03B1\u03C3", "."});
  EXPECT_EQ(t.tokenize("\u039F\u0394\u039F\u03A3. \u03A3\u0391 \u03A3\u0391\u03A3"),
            (Pieces{"\u03BF\u03B4\u03BF\u03C3", ".", "\u03C3\u03B1", "\u03C3\u03B1\u03C3"}));
}

TEST(WordPiece, CjkIdeographsBecomeWordsOfTheirOwn) {
  auto t = words_vocab(true, {"ah", "\u535A", "\u63A8", "zz"});
  EXPECT_EQ(t.tokenize("ah\u535A\u63A8zz"), (Pieces{"ah", "\u535A", "\u63A8", "zz"}));
}

TEST(WordPiece, AsciiSymbolsAndUnicodePunctuationSplitWords) {
  auto t = words_vocab(true, {"a", "b", "c", "d", "e", "$", "`", "-", "\u00BF", "\u2014"});
  EXPECT_EQ(t.tokenize("a$b`c-d\u00BFe\u2014a"),
            (Pieces{"a", "$", "b", "`", "c", "-", "d", "\u00BF", "e", "\u2014", "a"}));
}

TEST(WordPiece, CleaningDropsNulReplacementCharAndControlsAndTreatsOtherSpacesAsSpaces) {
  auto t = words_vocab(true, {"ab", "cd", "test"});
  std::string with_nul("a\0b", 3);
  EXPECT_EQ(t.tokenize(with_nul), (Pieces{"ab"}));
  EXPECT_EQ(t.tokenize("a\uFFFDb c\x01" "d"), (Pieces{"ab", "cd"}));
  EXPECT_EQ(t.tokenize("\u00AD"), Pieces{});  // soft hyphen is a format character (Cf)
  EXPECT_EQ(t.tokenize("ab\u00A0cd"), (Pieces{"ab", "cd"}));   // no-break space (Zs)
  EXPECT_EQ(t.tokenize("ab\u2028cd"), (Pieces{"ab", "cd"}));   // line separator (Zl)
  EXPECT_EQ(t.tokenize("Test"), (Pieces{"test"}));
}

TEST(WordPiece, WordsOverOneHundredCodePointsBecomeUnknown) {
  auto t = words_vocab(true, {"a", "##a", "\u00E9", "##\u00E9"});
  EXPECT_EQ(t.tokenize(std::string(100, 'a')).size(), 100u);
  EXPECT_EQ(t.tokenize(std::string(101, 'a')), (Pieces{"[UNK]"}));
  // The limit counts code points, not bytes: 100 two-byte letters still fit (uncased keeps é).
  auto cased = words_vocab(false, {"\u00E9", "##\u00E9"});
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\u00E9";
  EXPECT_EQ(cased.tokenize(accents).size(), 100u);
}

TEST(WordPiece, SpecialTokensWrittenInTheTextAreKept) {
  auto t = toy();
  Encoding e = t.encode("want[SEP]want [MASK] [cls]", 0);
  EXPECT_THAT(e.pieces, ElementsAre("[CLS]", "want", "[SEP]", "want", "[MASK]", "[UNK]", "[UNK]", "[UNK]", "[SEP]"));
}

TEST(WordPiece, PairPutsSegmentsBetweenSeparatorsWithTypeIds) {
  auto t = toy();
  Encoding e = t.encode_pair("unwanted", "running", 0);
  EXPECT_THAT(e.ids, ElementsAre(1, 9, 6, 7, 2, 10, 11, 2));
  EXPECT_THAT(e.type_ids, ElementsAre(0, 0, 0, 0, 0, 1, 1, 1));
  EXPECT_FALSE(e.truncated);
}

TEST(WordPiece, TruncationKeepsTheSpecialTokens) {
  auto t = toy();
  Encoding e = t.encode("unwanted running", 4);
  EXPECT_THAT(e.pieces, ElementsAre("[CLS]", "un", "##want", "[SEP]"));
  EXPECT_TRUE(e.truncated);
  EXPECT_FALSE(t.encode("unwanted running", 7).truncated);
  EXPECT_THAT(t.encode("unwanted", 2).pieces, ElementsAre("[CLS]", "[SEP]"));
  EXPECT_THROW(t.encode("unwanted", 1), InvalidArgument);
}

TEST(WordPiece, PairTruncationShortensTheLongerSegmentFirst) {
  auto t = toy();
  // a = un ##want ##ed (3), b = runn ##ing (2); room for 3 -> a loses 1, then b loses 1.
  Encoding e = t.encode_pair("unwanted", "running", 6);
  EXPECT_THAT(e.pieces, ElementsAre("[CLS]", "un", "##want", "[SEP]", "runn", "[SEP]"));
  EXPECT_THAT(e.type_ids, ElementsAre(0, 0, 0, 0, 1, 1));
  EXPECT_TRUE(e.truncated);
  // b longer: only b shrinks while it is longer.
  Encoding f = t.encode_pair("want", "unwanted running", 7);
  EXPECT_THAT(f.pieces, ElementsAre("[CLS]", "want", "[SEP]", "un", "##want", "##ed", "[SEP]"));
  EXPECT_THROW(t.encode_pair("a", "b", 2), InvalidArgument);
}

TEST(WordPiece, InvalidUtf8IsRejectedWithItsByteOffset) {
  auto t = toy();
  try {
    t.encode("want\xFFwant", 0);
    FAIL() << "invalid UTF-8 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("invalid UTF-8 at byte offset 4"));
  }
  EXPECT_THROW(t.encode("\xC0\xAF", 0), InvalidArgument);          // overlong "/"
  EXPECT_THROW(t.encode("\xED\xA0\x80", 0), InvalidArgument);      // surrogate
  EXPECT_THROW(t.encode("ab\xE2\x82", 0), InvalidArgument);        // cut short
  EXPECT_THROW(t.encode("\xF4\x90\x80\x80", 0), InvalidArgument);  // above U+10FFFF
  EXPECT_THROW(t.encode_pair("want", "\x80", 0), InvalidArgument);
}

TEST(WordPiece, VocabularyFileIsReadOnePiecePerLine) {
  ScratchDir dir("wp_file");
  Pieces crlf = kToyVocab;
  for (auto& p : crlf) p += "\r";
  auto t = WordPieceTokenizer::from_file(write_lines(dir, "vocab.txt", crlf));
  EXPECT_EQ(t.vocab_size(), 15u);
  EXPECT_EQ(t.pad_id(), 3);
  EXPECT_EQ(t.piece_id("##ing"), 11);
  EXPECT_EQ(t.kind(), "wordpiece");
}

TEST(WordPiece, BrokenVocabulariesAreReportedAsCorrupt) {
  ScratchDir dir("wp_bad");
  Pieces duplicate = kToyVocab;
  duplicate.push_back("want");
  try {
    WordPieceTokenizer::from_file(write_lines(dir, "dup.txt", duplicate));
    FAIL() << "duplicate accepted";
  } catch (const CorruptFile& e) {
    EXPECT_THAT(e.what(), HasSubstr("duplicate piece \"want\" with ids 5 and 15"));
  }
  Pieces no_cls = kToyVocab;
  no_cls.erase(no_cls.begin() + 1);
  try {
    WordPieceTokenizer::from_file(write_lines(dir, "nocls.txt", no_cls));
    FAIL() << "missing [CLS] accepted";
  } catch (const CorruptFile& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing special token [CLS]"));
  }
  EXPECT_THROW(WordPieceTokenizer::from_file(write_lines(dir, "gap.txt", {"[PAD]", "", "[UNK]"})), CorruptFile);
  write_file_atomic(dir.file("latin1.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]\ncaf\xE9\n");
  try {
    WordPieceTokenizer::from_file(dir.file("latin1.txt"));
    FAIL() << "Latin-1 vocabulary accepted";
  } catch (const CorruptFile& e) {
    // The line a user opens the file at, not only a byte offset into 30,000 lines.
    EXPECT_THAT(e.what(), HasSubstr("latin1.txt: invalid UTF-8 at line 5, byte 4 of the line (byte offset 27)"));
  }
  EXPECT_THROW(WordPieceTokenizer::from_file(dir.file("absent.txt")), FileNotFound);
}

// A quadratic step or a recursion per character would not finish (or overflow the stack) here.
TEST(WordPiece, TenMegabytesOfTextTokenize) {
  auto t = toy();
  std::string one_word(10u << 20, 'w');
  EXPECT_THAT(t.tokenize(one_word), ElementsAre("[UNK]"));
  std::string words;
  while (words.size() < (10u << 20)) words += "unwanted running, ";
  Encoding e = t.encode(words, 512);
  EXPECT_EQ(e.ids.size(), 512u);
  EXPECT_TRUE(e.truncated);
  EXPECT_THAT(std::vector<std::string>(e.pieces.end() - 4, e.pieces.end()), ElementsAre("runn", "##ing", ",", "[SEP]"));  // 85 x 6 pieces
}

// ---- special tokens named by the model (MPNet's layout; the ids are positions) ----------------

namespace {

// MPNet-style: <s> <pad> </s> <unk> first, BERT's bracketed pieces as ordinary ones, <mask> last.
const Pieces kMpnetToy = {"<s>", "<pad>", "</s>", "<unk>", "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                          "<", ">", "[", "]", "a", "b", "un", "##k", "cl", "##s", "<mask>"};

SpecialTokens mpnet_specials() {
  SpecialTokens s;
  s.cls = "<s>";
  s.sep = "</s>";
  s.pad = "<pad>";
  s.unk = "[UNK]";
  s.mask = "<mask>";
  s.literals = {{"<s>", false}, {"<pad>", false}, {"</s>", false}, {"<unk>", true}, {"[UNK]", false}, {"<mask>", false}};
  s.pair_separators = 2;
  return s;
}

}  // namespace

TEST(WordPieceSpecials, TheModelsSpecialsFrameTheTextAndTheLiteralsItNamesStayWhole) {
  WordPieceTokenizer t(kMpnetToy, true, "toy", mpnet_specials());
  EXPECT_EQ(t.pad_id(), 1);
  // <s> a </s>; [CLS] is no literal of this model: [ cl ##s ].
  EXPECT_THAT(t.encode("a", 0).ids, ElementsAre(0, 13, 2));
  EXPECT_THAT(t.encode("[CLS]a", 0).ids, ElementsAre(0, 11, 17, 18, 12, 13, 2));
  // Raw literals in the raw text, anywhere, longest first; a lower-cased spelling is no match.
  EXPECT_THAT(t.encode("a<mask>b<s></s>[UNK]", 0).ids, ElementsAre(0, 13, 19, 14, 0, 2, 5, 2));
  EXPECT_THAT(t.encode("[unk]", 0).ids, ElementsAre(0, 11, 15, 16, 12, 2));
  // The normalised literal <unk> is found after lower-casing and accent stripping, inside a word.
  EXPECT_THAT(t.encode("a<UNK>b <\u00dank>", 0).ids, ElementsAre(0, 13, 3, 14, 3, 2));
  EXPECT_THAT(t.encode("<un", 0).ids, ElementsAre(0, 9, 15, 2));
  // Pairs: <s> a </s></s> b </s>, and the four specials leave max_length - 4 for the texts.
  Encoding pair = t.encode_pair("a", "b", 0);
  EXPECT_THAT(pair.ids, ElementsAre(0, 13, 2, 2, 14, 2));
  EXPECT_THAT(pair.type_ids, ElementsAre(0, 0, 0, 1, 1, 1));
  EXPECT_THAT(t.encode_pair("a a", "b b", 6).ids, ElementsAre(0, 13, 2, 2, 14, 2));
  try {
    t.encode_pair("a", "b", 3);
    FAIL() << "max_length 3 accepted for a pair of four specials";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("leaves no room for the 4 special tokens of a pair (<s>, </s> x 3; at least 4"));
  }
}

TEST(WordPieceSpecials, BertsDefaultsAreWhatAVocabularyAloneMeans) {
  EXPECT_TRUE(SpecialTokens{}.is_bert());
  EXPECT_FALSE(mpnet_specials().is_bert());
  WordPieceTokenizer plain(kToyVocab, true);
  WordPieceTokenizer named(kToyVocab, true, "toy", SpecialTokens{});
  for (const char* text : {"[CLS]want[MASK]", "UNwant\u00E9d,running", "[SEP][UNK]"}) {
    EXPECT_EQ(plain.encode(text, 0).ids, named.encode(text, 0).ids) << text;
  }
  EXPECT_THAT(plain.encode("want[MASK]", 0).ids, ElementsAre(1, 5, 4, 2));
}

TEST(WordPieceSpecials, ASpecialOrLiteralTheVocabularyLacksIsCorruptNamingIt) {
  SpecialTokens no_mask = mpnet_specials();
  no_mask.mask = "<msk>";
  try {
    WordPieceTokenizer(kMpnetToy, true, "toy.txt", no_mask);
    FAIL() << "absent mask accepted";
  } catch (const CorruptFile& e) {
    EXPECT_THAT(e.what(), HasSubstr("toy.txt: missing special token <msk> (the model's mask token, as its manifest names it)"));
  }
  SpecialTokens absent_literal = mpnet_specials();
  absent_literal.literals.push_back({"<sep>", false});
  EXPECT_THROW(WordPieceTokenizer(kMpnetToy, true, "toy", absent_literal), CorruptFile);
  SpecialTokens three = mpnet_specials();
  three.pair_separators = 3;
  EXPECT_THROW(WordPieceTokenizer(kMpnetToy, true, "toy", three), CorruptFile);
}

// ---- the real bert-base-uncased vocabulary (models/bert_vocab/fetch_vocab.sh) ----------------

class BertBaseUncased : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = env_or_empty("COUNTERPOINT_BERT_VOCAB");
    if (path_.empty()) {
      GTEST_SKIP() << "COUNTERPOINT_BERT_VOCAB is unset: run models/bert_vocab/fetch_vocab.sh DIR and "
                      "point it at DIR/vocab.txt";
    }
  }
  std::string path_;
};

TEST_F(BertBaseUncased, ReproducesTheWellKnownIds) {
  auto t = WordPieceTokenizer::from_file(path_);
  EXPECT_EQ(t.vocab_size(), 30522u);
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.piece_id("[UNK]"), 100);
  EXPECT_EQ(t.piece_id("[MASK]"), 103);
  EXPECT_EQ(t.piece_id("the"), 1996);
  EXPECT_EQ(t.piece_id("##s"), 2015);
  // The example of Hugging Face's documentation.
  EXPECT_THAT(t.encode("Hello, my dog is cute", 0).ids, ElementsAre(101, 7592, 1010, 2026, 3899, 2003, 10140, 102));
  EXPECT_THAT(t.encode("Hello world", 0).ids, ElementsAre(101, 7592, 2088, 102));
  Encoding pair = t.encode_pair("hello", "world", 0);
  EXPECT_THAT(pair.ids, ElementsAre(101, 7592, 102, 2088, 102));
  EXPECT_THAT(pair.type_ids, ElementsAre(0, 0, 0, 1, 1));
}
