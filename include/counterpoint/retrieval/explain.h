// counterpoint/retrieval/explain.h: why a passage scores as it does against a query, in words
// and coordinates. The token side: every query token's best cosine against the passage's tokens
// (and the reverse), worst aligned first, so the words one side has and the other lacks (a
// negation, a swapped role) come out on top. The Es side: the coordinates of Es(q) - Es(p) that
// carry most of its squared norm, which are what makes the difference sparse (a high Hoyer
// term) when they are few.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::retrieval {

struct TokenAlignment {
  std::string piece;       // the vocabulary piece
  std::size_t position;    // in its text's tokens (special tokens included)
  float best_cosine;       // against the other text's closest token
  std::string best_match;  // that closest token's piece
};

struct CoordinateShare {
  std::size_t coordinate;
  float difference;  // Es(q)[c] - Es(p)[c]
  float share;       // difference^2 / |Es(q) - Es(p)|^2
};

struct Explanation {
  std::string passage_id, passage;
  float cosine = 0.0f;    // cos(E(q), E(p))
  float sparsity = 0.0f;  // the index's sparsity measure of Es(q) - Es(p); 0 without Es
  std::vector<TokenAlignment> query_tokens;    // worst aligned first, at most top_tokens
  std::vector<TokenAlignment> passage_tokens;  // worst aligned first, at most top_tokens
  std::vector<CoordinateShare> coordinates;    // largest share first, at most top_coordinates; empty without Es
  float top_share = 0.0f;                      // the listed coordinates' shares summed
};

// Explains passage `passage_id` of the retriever's index for `query` (encoded with the query
// prefix, or `prefix_override` when the search replaced it, as Retriever::encode_queries does; the
// passage with the document prefix, from the text the index stores). Special pieces
// written in brackets ([CLS], [SEP], <s>, </s>) are not ranked. InvalidArgument for an id the
// index lacks, top_tokens 0, or a retriever without an encoder.
// `stance` is the search's (SearchOptions::stance): Es(q) is of the claim it reads, as in the search.
Explanation explain(const Retriever& retriever, const std::string& query, const std::string& passage_id,
                    std::size_t top_tokens = 5, std::size_t top_coordinates = 5,
                    const scoring::SparsityOptions& sparsity = {}, Stance stance = Stance::kFromQuery,
                    const std::string* prefix_override = nullptr);

// Three indented lines for a reader, the form `search --explain` and the demo print:
//   query tokens aligned worst:   not (0.41 ~ the), ...
//   passage tokens aligned worst: never (0.38 ~ is), ...
//   Es coordinates carrying the difference: 17 (+0.21, 34%), 203 (-0.12, 11%) = 45% of |Es(q)-Es(p)|^2
std::string describe(const Explanation& explanation);

}  // namespace counterpoint::retrieval
