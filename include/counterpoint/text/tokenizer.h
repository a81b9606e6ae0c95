// counterpoint/text: turning text into vocabulary ids, the first step of every encoder.
// tokenizer.h owns the common interface (Encoding, Tokenizer) and the factory that builds a
// tokenizer from the `kind` named in a model manifest. Every tokenizer rejects invalid UTF-8
// with InvalidArgument naming the byte offset: input is never silently repaired or dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace counterpoint {

struct Encoding {
  std::vector<int64_t> ids;         // including special tokens
  std::vector<int64_t> type_ids;    // token-type (segment) ids, same length as ids
  std::vector<std::string> pieces;  // the vocabulary pieces, same length
  bool truncated = false;           // true when max_length cut tokens off
};

// The special tokens of a WordPiece model, by piece, as its manifest records them (the converter
// reads them from the checkpoint's tokenizer.json). The defaults are BERT's, which is what a
// manifest without them means, so models converted before they were recorded keep their ids
// and identities.
struct SpecialTokens {
  // A piece kept whole wherever a text spells it (Hugging Face's added tokens). `normalized`:
  // matched in the lower-cased, accent-stripped text (MPNet's <unk>), else in the raw text.
  struct Literal {
    std::string piece;
    bool normalized = false;
    bool operator==(const Literal& o) const { return piece == o.piece && normalized == o.normalized; }
  };
  std::string cls = "[CLS]";  // first token of every input (<s> for MPNet)
  std::string sep = "[SEP]";  // last token, and between a pair's segments (</s>)
  std::string pad = "[PAD]";
  std::string unk = "[UNK]";
  std::string mask = "[MASK]";
  // Empty: BERT's, those of [CLS] [SEP] [UNK] [PAD] [MASK] that the vocabulary holds.
  std::vector<Literal> literals;
  // Separators between a pair's segments: 1 for BERT ([CLS] a [SEP] b [SEP]), 2 for MPNet
  // (<s> a </s></s> b </s>).
  std::size_t pair_separators = 1;

  bool is_bert() const { return *this == SpecialTokens{}; }
  bool operator==(const SpecialTokens& o) const {
    return cls == o.cls && sep == o.sep && pad == o.pad && unk == o.unk && mask == o.mask &&
           literals == o.literals && pair_separators == o.pair_separators;
  }
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // max_length 0 = no limit; otherwise the result holds at most max_length ids.
  virtual Encoding encode(std::string_view text, std::size_t max_length) const = 0;
  // Two segments in one input (type ids 0 and 1). Throws InvalidArgument for tokenizers
  // whose models take one segment only.
  virtual Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length) const;
  virtual int64_t pad_id() const = 0;
  virtual std::size_t vocab_size() const = 0;
  // "wordpiece", "use-unigram" or "sentencepiece", as written in a model manifest.
  virtual std::string kind() const = 0;
};

// Builds the tokenizer of `kind` from its file at `path` (vocab.txt for "wordpiece",
// vocab.json for "use-unigram", the .model file for "sentencepiece"). `lowercase` and `specials`
// apply to "wordpiece" only (InvalidArgument for other kinds unless `specials` is BERT's default).
// Unknown kind -> InvalidArgument listing the known kinds.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& kind, const std::string& path,
                                          bool lowercase = true, const SpecialTokens& specials = {});

}  // namespace counterpoint
