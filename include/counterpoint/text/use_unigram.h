// counterpoint/text/use_unigram.h: the unigram tokenizer of Universal Sentence Encoder lite,
// an exact port of the tokenizer in the npm package @energetic-ai/embeddings (itself from
// @tensorflow-models/universal-sentence-encoder), kind "use-unigram":
//   NFKC, then U+2581 before the text and in place of every U+0020; a trie over the pieces
//   from id 6 on (ids 0..5 are reserved); Viterbi over code points in which a candidate
//   replaces the best so far when that best is exactly 0 or the candidate scores >= it;
//   a code point starting no piece becomes id 0, and runs of id 0 collapse into one.
// Quirks of the original are kept on purpose so ids match the trained model: null scores
// count as 0, a repeated piece takes the id of its last occurrence, and the back-trace steps
// back by the UTF-16 length of each piece.
// No special tokens; pad id 0; truncation keeps the first max_length ids.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "counterpoint/text/tokenizer.h"

namespace counterpoint {

class UseUnigramTokenizer : public Tokenizer {
 public:
  static constexpr std::size_t kReservedIds = 6;

  // (piece, score) per id. CorruptFile (naming `source`) when there are no pieces beyond the
  // reserved ids or the unknown piece (id 0) is empty.
  UseUnigramTokenizer(std::vector<std::pair<std::string, double>> vocabulary,
                      const std::string& source = "vocabulary");
  // Reads vocab.json: a JSON array of [piece, score] (score may be null).
  static UseUnigramTokenizer from_file(const std::string& vocab_json_path);

  Encoding encode(std::string_view text, std::size_t max_length) const override;
  int64_t pad_id() const override { return 0; }
  std::size_t vocab_size() const override { return pieces_.size(); }
  std::string kind() const override { return "use-unigram"; }

 private:
  struct TrieNode {
    bool is_piece = false;
    int32_t id = 0;
    int32_t length = 0;  // code points from the root
    double score = 0.0;
  };
  int32_t child(int32_t node, char32_t symbol) const;

  std::vector<std::string> pieces_;
  std::vector<int32_t> utf16_lengths_;
  std::vector<TrieNode> nodes_;                        // node 0 is the root
  std::unordered_map<uint64_t, int32_t> children_;     // (node << 21 | code point) -> node
};

}  // namespace counterpoint
