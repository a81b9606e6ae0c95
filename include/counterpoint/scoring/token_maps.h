// counterpoint/scoring/token_maps.h: stage-2 scores on token-level embeddings.
// Owns the token-token cosine map M[i][j] = cos(q_i, c_j) between a query's and a candidate's
// token vectors (padding already removed) and the fixed reductions of M: F0 (mean),
// F1 (MaxSim) and F2 (alignment-biased). Learned reductions live in map_verifier.h.
#pragma once

#include "counterpoint/core/matrix.h"

namespace counterpoint::scoring {

// Rows = query tokens, columns = candidate tokens. Zero-norm tokens have no direction and
// give cosine 0. Empty token matrices, width mismatch or NaN/Inf throw InvalidArgument.
Matrix token_cosine_map(MatrixView query_tokens, MatrixView candidate_tokens);

// F0: mean of M over all (query token, candidate token) pairs.
float map_mean(MatrixView map);

// F1 (MaxSim, late interaction): mean over query tokens of the max over candidate tokens.
// The reference code averages; the paper's docstring says "sum", which is this value times
// the number of query tokens and ranks candidates of one query identically.
float map_maxsim(MatrixView map);

struct AlignmentOptions {
  float lambda = 0.1f;  // penalty per position of distance |i - j|; finite
  float tau = 0.1f;     // softmax temperature; > 0
};

// F2: A = softmax_j((M_ij - lambda * |i - j|) / tau) per query token i,
// score = mean_i sum_j A_ij * M_ij. The softmax subtracts each row's maximum first.
float map_alignment(MatrixView map, const AlignmentOptions& options = {});

}  // namespace counterpoint::scoring
