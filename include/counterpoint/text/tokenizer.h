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
// vocab.json for "use-unigram", the .model file for "sentencepiece"). `lowercase` applies to
// "wordpiece" only. Unknown kind -> InvalidArgument listing the known kinds.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& kind, const std::string& path,
                                          bool lowercase = true);

}  // namespace counterpoint
