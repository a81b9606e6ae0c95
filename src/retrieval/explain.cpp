#include "counterpoint/retrieval/explain.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <numeric>

#include "counterpoint/core/errors.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/scoring/pooled.h"
#include "counterpoint/scoring/token_maps.h"

namespace counterpoint::retrieval {
namespace {

bool is_special(const std::string& piece) {
  return piece.size() >= 2 && ((piece.front() == '[' && piece.back() == ']') ||
                               (piece.front() == '<' && piece.back() == '>'));
}

// The pieces the network saw for `text` encoded with `options`: its prefix, then the text, cut
// to max_length.
std::vector<std::string> pieces_of(const Encoder& encoder, const std::string& text, const EncodeOptions& options) {
  const ModelManifest& m = encoder.manifest();
  return encoder.tokenize(prefix_for(m, options) + text, m.max_length).pieces;
}

// For each row of `map` (a token of one side), its best column (a token of the other side);
// the rows aligned worst first, at most `top`.
std::vector<TokenAlignment> worst_aligned(const Matrix& map, const std::vector<std::string>& rows,
                                          const std::vector<std::string>& columns, std::size_t top) {
  std::vector<TokenAlignment> all;
  for (std::size_t r = 0; r < map.rows() && r < rows.size(); ++r) {
    if (is_special(rows[r])) continue;
    float best = -2.0f;
    std::size_t best_column = 0;
    for (std::size_t c = 0; c < map.cols() && c < columns.size(); ++c) {
      if (is_special(columns[c])) continue;
      if (map(r, c) > best) best = map(r, c), best_column = c;
    }
    if (best < -1.5f) continue;  // the other side has no ordinary token
    all.push_back({rows[r], r, best, columns[best_column]});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const TokenAlignment& a, const TokenAlignment& b) { return a.best_cosine < b.best_cosine; });
  if (all.size() > top) all.resize(top);
  return all;
}

}  // namespace

Explanation explain(const Retriever& retriever, const std::string& query, const std::string& passage_id,
                    std::size_t top_tokens, std::size_t top_coordinates, const scoring::SparsityOptions& sparsity,
                    Stance stance, const std::string* prefix_override) {
  const Encoder* encoder = retriever.encoder();
  if (!encoder) throw InvalidArgument("explain: the retriever has no encoder");
  if (top_tokens == 0) throw InvalidArgument("explain: top_tokens must be >= 1");
  const index::DocumentIndex& index = retriever.index();
  const auto slot = index.slot_of(passage_id);
  if (!slot) throw InvalidArgument("explain: no passage '" + passage_id + "' in the index");
  Explanation out;
  out.passage_id = passage_id;
  out.passage = index.text(*slot);

  EncodeOptions as_query, as_document;
  as_query.role = TextRole::kQuery;
  as_query.prefix_override = prefix_override;
  as_document.role = TextRole::kDocument;
  const Encoder* sparse = retriever.sparse_encoder();
  const std::size_t d = index.options().sparse_dim;
  const bool with_es = sparse && d > 0;
  // E(q) and, when there is Es, Es(q), as a search encodes them (one pass for a head Es).
  SearchOptions encoding;
  encoding.scorer = with_es ? Scorer::kSparsity : Scorer::kCosine;
  encoding.stance = stance;
  const EncodedQueries encoded = retriever.encode_queries({query}, encoding, prefix_override);
  const Matrix& q = encoded.dense;
  scoring::cosine_scores(q.view(), MatrixView(index.dense_row(*slot), 1, index.options().dim), &out.cosine);

  const Matrix query_states = encoder->encode_tokens({query}, as_query).at(0);
  const Matrix passage_states = encoder->encode_tokens({out.passage}, as_document).at(0);
  const auto query_pieces = pieces_of(*encoder, query, as_query);
  const auto passage_pieces = pieces_of(*encoder, out.passage, as_document);
  const Matrix map = scoring::token_cosine_map(query_states.view(), passage_states.view());
  Matrix transposed(map.cols(), map.rows());
  for (std::size_t r = 0; r < map.rows(); ++r)
    for (std::size_t c = 0; c < map.cols(); ++c) transposed(c, r) = map(r, c);
  out.query_tokens = worst_aligned(map, query_pieces, passage_pieces, top_tokens);
  out.passage_tokens = worst_aligned(transposed, passage_pieces, query_pieces, top_tokens);

  if (with_es) {
    const Matrix& qs = encoded.sparse;
    std::vector<float> row(d);
    index.gather_sparse(&*slot, 1, row.data());
    // The measure a search reports for this passage: an unset scale resolves from Es as there.
    scoring::SparsityOptions measure = sparsity;
    measure.scale = choose_sparsity_scale(sparsity.scale, sparse).value;
    scoring::sparsity_scores(qs.view(), MatrixView(row.data(), 1, d), measure, &out.sparsity);
    std::vector<float> difference(d);
    double norm_sq = 0.0;
    for (std::size_t c = 0; c < d; ++c) {
      difference[c] = qs(0, c) - row[c];
      norm_sq += double(difference[c]) * difference[c];
    }
    std::vector<std::size_t> order(d);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return std::fabs(difference[a]) > std::fabs(difference[b]); });
    for (std::size_t i = 0; i < std::min(top_coordinates, d); ++i) {
      const std::size_t c = order[i];
      const float share = norm_sq > 0 ? float(double(difference[c]) * difference[c] / norm_sq) : 0.0f;
      out.coordinates.push_back({c, difference[c], share});
      out.top_share += share;
    }
  }
  return out;
}

std::string describe(const Explanation& e) {
  const auto tokens = [](const std::vector<TokenAlignment>& list) {
    std::string line;
    char buffer[64];
    for (const TokenAlignment& t : list) {
      std::snprintf(buffer, sizeof buffer, " (%.2f ~ ", t.best_cosine);
      line += (line.empty() ? "" : ", ") + t.piece + buffer + t.best_match + ")";
    }
    return line.empty() ? std::string("(none)") : line;
  };
  std::string out = "    query tokens aligned worst:   " + tokens(e.query_tokens) + "\n" +
                    "    passage tokens aligned worst: " + tokens(e.passage_tokens) + "\n";
  if (!e.coordinates.empty()) {
    std::string line;
    char buffer[96];
    for (const CoordinateShare& c : e.coordinates) {
      std::snprintf(buffer, sizeof buffer, "%s%zu (%+.2f, %.0f%%)", line.empty() ? "" : ", ", c.coordinate,
                    c.difference, 100.0 * c.share);
      line += buffer;
    }
    std::snprintf(buffer, sizeof buffer, " = %.0f%% of |Es(q)-Es(p)|^2", 100.0 * e.top_share);
    out += "    Es coordinates carrying the difference: " + line + buffer + "\n";
  }
  return out;
}

}  // namespace counterpoint::retrieval
