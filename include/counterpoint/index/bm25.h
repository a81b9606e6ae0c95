// counterpoint/index/bm25.h: lexical stage 1, Okapi BM25 over document slots.
// Owns the analyzer (lower-cased Unicode letter/digit runs, optional Snowball English
// stemming) and the inverted postings. Documents are keyed by the same slots as
// DocumentIndex, which keeps a Bm25Index in sync with its own adds and removals.
//
// Scoring (Lucene/Anserini form, non-negative idf):
//   idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//   score(q, d) = sum over query tokens t (repeats count again) of
//                 idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
// with N live documents, |d| the token count of d after analysis and avgdl their mean.
// Defaults k1 = 0.9, b = 0.4 are the Anserini values used by the data sets' reference
// BM25; the stance-retrieval paper (REFERENCE.md section 2) uses k1 = 1.5, b = 0.75.
//
// Thread safety: const methods may run concurrently; add/remove need exclusive access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace counterpoint::index {

struct Bm25Options {
  float k1 = 0.9f;
  float b = 0.4f;
  bool stem = false;  // Snowball English stemmer (libstemmer) after lower-casing
};

struct Bm25Hit {
  std::int64_t slot = -1;
  float score = 0.0f;
};

class Bm25Index {
 public:
  // Throws InvalidArgument when k1 < 0, b outside [0, 1] or either is not finite.
  explicit Bm25Index(Bm25Options options = {});

  const Bm25Options& options() const { return options_; }

  // Tokens as indexed: text::alphanumeric_words, then stemmed when options().stem.
  std::vector<std::string> analyze(std::string_view text) const;

  // Indexes `text` under `slot` (>= 0, not currently present). add_analyzed takes the
  // output of analyze(), so a caller can validate a whole batch before changing anything.
  void add(std::int64_t slot, std::string_view text);
  void add_analyzed(std::int64_t slot, const std::vector<std::string>& tokens);
  // Throws InvalidArgument naming the slot if it is not present.
  void remove(std::int64_t slot);
  bool contains(std::int64_t slot) const;
  // Live documents.
  std::size_t size() const { return live_count_; }

  // Top k (k >= 1) live documents with a positive score, best first; ties by lower slot.
  std::vector<Bm25Hit> search(std::string_view query, std::size_t k) const;
  // Score of each given slot (0 for slots absent or sharing no term with the query).
  std::vector<float> score(std::string_view query, const std::vector<std::int64_t>& slots) const;
  // Scores indexed by slot, for slots 0 .. slot_capacity()-1 (0 where absent).
  std::vector<float> score_all(std::string_view query) const;
  std::size_t slot_capacity() const { return doc_length_.size(); }

 private:
  struct Posting {
    std::int64_t slot;
    std::uint32_t tf;
  };
  struct Term {
    std::vector<Posting> postings;  // may hold removed slots; skipped while scoring
    std::uint32_t df = 0;           // live documents containing the term
  };
  float idf(const Term& term) const;
  void accumulate(std::string_view query, std::vector<float>& scores) const;

  Bm25Options options_;
  std::unordered_map<std::string, Term> terms_;
  std::vector<std::uint32_t> doc_length_;             // by slot
  std::vector<std::vector<Term*>> doc_terms_;  // distinct terms by slot, for removal (map nodes are stable)
  std::vector<std::uint8_t> live_;                    // by slot
  std::size_t live_count_ = 0;
  std::uint64_t total_length_ = 0;                    // over live documents
};

}  // namespace counterpoint::index
