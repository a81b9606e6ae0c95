// Internal to the scoring layer: the argument checks every one-to-many scoring function runs,
// with messages that name the public function.
#pragma once

#include <cstddef>

#include "counterpoint/core/matrix.h"

namespace counterpoint::scoring::detail {

// InvalidArgument unless `query` is exactly one row.
void require_query_row(MatrixView query, const char* what);
// InvalidArgument for width 0, candidates of another width, or candidates without data.
void require_pair(MatrixView query, MatrixView candidates, const char* function);
// Validation is done on the results: any NaN or Inf in an input makes the affected score
// non-finite, so the inputs are scanned (to name the culprit) only when a score is. Finite
// inputs whose squares overflow float are reported as such.
void require_finite_scores(const float* scores, std::size_t n, MatrixView query, MatrixView candidates,
                           const char* function);

}  // namespace counterpoint::scoring::detail
