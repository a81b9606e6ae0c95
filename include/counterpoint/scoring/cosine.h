// counterpoint/scoring/cosine.h: cosine similarity of pooled embeddings, one query against many rows.
#pragma once

#include "counterpoint/core/matrix.h"

namespace counterpoint::scoring {

// One query row against K candidate rows; `out` receives K floats. True cosine (inputs need not
// be normalised); a zero-norm row gives cosine 0. InvalidArgument for a query that is not one
// row, a width mismatch, or NaN/Inf in either input.
void cosine_scores(MatrixView query, MatrixView candidates, float* out);

// Many-to-many: result(i, j) is the cosine of query row i and candidate row j (Q x C).
Matrix cosine_matrix(MatrixView queries, MatrixView candidates);

}  // namespace counterpoint::scoring
