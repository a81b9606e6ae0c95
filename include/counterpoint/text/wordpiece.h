// counterpoint/text/wordpiece.h: BERT's tokenizer, reproducing Hugging Face's slow
// BertTokenizer (BasicTokenizer + WordpieceTokenizer, tokenize_chinese_chars=True,
// strip_accents=None):
//   - cleaning drops NUL, U+FFFD and control characters and turns whitespace into spaces;
//   - CJK ideographs become words of their own; text is NFC-normalised, then split on
//     whitespace (Python's str.split() definition);
//   - with lowercase: each code point's full lower case, as Hugging Face's tokenizers (a capital
//     sigma is σ even at the end of a word, where Python's str.lower() gives ς), NFD, combining marks
//     (category Mn) removed;
//   - punctuation (ASCII 33-47, 58-64, 91-96, 123-126 and Unicode P*) splits words;
//   - greedy longest-match-first WordPiece with "##" continuations; a word longer than 100
//     code points or with an unmatched remainder becomes one [UNK];
//   - the model's added tokens (SpecialTokens::literals; BERT's [CLS], [SEP], [UNK], [PAD],
//     [MASK]) written in the text are kept as those tokens, leftmost and longest first, as Hugging
//     Face's tokenizers do: raw ones in the raw text, normalised ones (MPNet's <unk>) in the
//     lower-cased, accent-stripped words;
//   - cls text sep ([CLS] text [SEP]; <s> text </s> for MPNet); pairs cls a sep b sep with type
//     ids 0 then 1, with the model's number of separators between a and b (</s></s> for MPNet).
// Truncation of pairs removes one token at a time from the longer segment (from the second
// when both are equally long).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "counterpoint/text/tokenizer.h"

namespace counterpoint {

class WordPieceTokenizer : public Tokenizer {
 public:
  // Longer words (in code points) become [UNK], as in BERT.
  static constexpr std::size_t kMaxCharsPerWord = 100;

  // `pieces[i]` is the piece with id i. CorruptFile (naming `source`) on duplicate or empty
  // pieces or when the vocabulary lacks a special token (cls, sep, unk, pad; mask and the
  // literals too when `specials` is not BERT's default).
  WordPieceTokenizer(std::vector<std::string> pieces, bool lowercase,
                     const std::string& source = "vocabulary", const SpecialTokens& specials = {});
  // Reads vocab.txt: one piece per line, line n (from 0) holding the piece with id n.
  static WordPieceTokenizer from_file(const std::string& vocab_path, bool lowercase = true,
                                      const SpecialTokens& specials = {});

  Encoding encode(std::string_view text, std::size_t max_length) const override;
  Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length) const override;
  int64_t pad_id() const override { return pad_id_; }
  std::size_t vocab_size() const override { return pieces_.size(); }
  std::string kind() const override { return "wordpiece"; }

  // The pieces of `text` without special tokens or truncation (what HF's tokenize() returns).
  std::vector<std::string> tokenize(std::string_view text) const;
  // Id of `piece`, or -1 when it is not in the vocabulary.
  int64_t piece_id(const std::string& piece) const;
  bool lowercase() const { return lowercase_; }

 private:
  struct Token {
    int64_t id;
    const std::string* piece;
  };
  struct Literal {
    int64_t id;
    bool normalized;
  };
  std::vector<Token> tokenize_ids(std::string_view text) const;
  // The longest literal of `normalized` kind spelt at `text[pos]`, or nullptr.
  const Literal* literal_at(std::string_view text, std::size_t pos, bool normalized) const;
  void split_punctuation(const std::string& word, std::size_t begin, std::size_t end, std::vector<Token>& out) const;
  void split_basic(std::string_view segment, std::vector<Token>& out) const;
  void append_wordpieces(const std::string& word, std::vector<Token>& out) const;
  Token token_of(int64_t id) const { return Token{id, &pieces_[static_cast<std::size_t>(id)]}; }

  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<Literal> literals_;  // pieces kept whole when written in a text, longest first
  bool first_bytes_[2][256] = {};   // [normalized][byte]: some literal of that kind starts with it
  bool lowercase_;
  int64_t cls_id_, sep_id_, unk_id_, pad_id_;
  std::size_t pair_separators_;
};

}  // namespace counterpoint
