#include "counterpoint/scoring/pooled.h"

#include <cmath>
#include <string>

#include "counterpoint/core/errors.h"

namespace counterpoint::scoring {

ScoreComponents combined_scores(MatrixView query_dense, MatrixView candidates_dense,
                                MatrixView query_sparse, MatrixView candidates_sparse, float alpha,
                                const SparsityOptions& options) {
  if (!std::isfinite(alpha)) {
    throw InvalidArgument("combined_scores: alpha must be finite, got " + std::to_string(alpha));
  }
  if (candidates_dense.rows != candidates_sparse.rows) {
    throw InvalidArgument("combined_scores: " + std::to_string(candidates_dense.rows) +
                          " dense candidate rows but " + std::to_string(candidates_sparse.rows) +
                          " sparse candidate rows");
  }
  const std::size_t k = candidates_dense.rows;
  ScoreComponents scores;
  scores.cosine.resize(k);
  scores.sparsity.resize(k);
  scores.final.resize(k);
  cosine_scores(query_dense, candidates_dense, scores.cosine.data());
  sparsity_scores(query_sparse, candidates_sparse, options, scores.sparsity.data());
  final_scores(scores.cosine.data(), scores.sparsity.data(), k, alpha, 1.0f, options, scores.final.data());
  return scores;
}

}  // namespace counterpoint::scoring
