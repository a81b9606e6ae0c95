// counterpoint/scoring/cosine.h: cosine similarity of pooled embeddings, one query against many rows.
#pragma once

#include <cstddef>

#include "counterpoint/core/matrix.h"

namespace counterpoint::scoring {

// One query row against K candidate rows; `out` receives K floats. True cosine (inputs need not
// be normalised); a zero-norm row gives cosine 0. InvalidArgument for a query that is not one
// row, a width mismatch, or NaN/Inf in either input.
void cosine_scores(MatrixView query, MatrixView candidates, float* out);

// Many-to-many: result(i, j) is the cosine of query row i and candidate row j (Q x C).
Matrix cosine_matrix(MatrixView queries, MatrixView candidates);

// out[i] = <query, row i> for n contiguous rows of width d (n floats), summed in float as FAISS and
// BLAS do, on the kernels the CPU runs (kernel_isa.h): the flat index's exact stage 1 calls it on
// blocks of its stored rows. No checks beyond null pointers (the caller owns the shapes).
void inner_products(const float* query, const float* rows, std::size_t n, std::size_t d, float* out);

}  // namespace counterpoint::scoring
