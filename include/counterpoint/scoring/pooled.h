// counterpoint/scoring/pooled.h: stage-2 scores on pooled (one vector per text) embeddings:
// cosine (cosine.h), the sparsity of differences (sparsity.h), float16 rows (float16.h), the
// kernels' instruction set (kernel_isa.h), and here the SparseCL score that combines them,
// final = stage-1 score + alpha * sparsity, the one implementation the retriever uses too.
#pragma once

#include <cstddef>
#include <vector>

#include "counterpoint/core/matrix.h"
#include "counterpoint/scoring/cosine.h"
#include "counterpoint/scoring/float16.h"
#include "counterpoint/scoring/kernel_isa.h"
#include "counterpoint/scoring/sparsity.h"

namespace counterpoint::scoring {

// The three parts of the SparseCL score for K candidates: final = cosine + alpha * sparsity.
struct ScoreComponents {
  std::vector<float> cosine;
  std::vector<float> sparsity;
  std::vector<float> final;
};

// Dense (E) and sparse-aware (Es) embeddings of one query and K candidates; the two candidate
// matrices must have the same row count (their widths may differ). alpha must be finite.
ScoreComponents combined_scores(MatrixView query_dense, MatrixView candidates_dense,
                                MatrixView query_sparse, MatrixView candidates_sparse, float alpha,
                                const SparsityOptions& options);

}  // namespace counterpoint::scoring
