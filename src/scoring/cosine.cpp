#include "counterpoint/scoring/cosine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "counterpoint/core/errors.h"
#include "kernels/kernels.h"
#include "score_checks.h"

namespace counterpoint::scoring {

using detail::require_finite_scores;
using detail::require_pair;
using detail::require_query_row;
using kernels::DotAndNorm;

namespace {

// The float kernels multiply in float: below about 1e-19 per component, products underflow
// (cosine at scale 1e-25 came out 0). Rows whose squared norm is that small are scored again
// with products in double, where every float input is representable.
constexpr double kUnderflowNormSq = 1e-30;

DotAndNorm dot_and_norm_in_double(const float* q, const float* c, std::size_t d) {
  DotAndNorm result;
  for (std::size_t i = 0; i < d; ++i) {
    result.dot += double(q[i]) * double(c[i]);
    result.norm_sq += double(c[i]) * double(c[i]);
  }
  return result;
}

}  // namespace

void cosine_scores(MatrixView query, MatrixView candidates, float* out) {
  require_query_row(query, "cosine_scores");
  require_pair(query, candidates, "cosine_scores");
  const std::size_t d = query.cols;
  const float* q = query.row(0);
  const auto fast = kernels::selected().dot_and_norm;
  double q_norm_sq = fast(q, q, d).norm_sq;
  const bool tiny_query = q_norm_sq < kUnderflowNormSq;
  if (tiny_query) q_norm_sq = dot_and_norm_in_double(q, q, d).norm_sq;
  const double q_norm = std::sqrt(q_norm_sq);
  for (std::size_t i = 0; i < candidates.rows; ++i) {
    DotAndNorm dn = tiny_query ? dot_and_norm_in_double(q, candidates.row(i), d) : fast(q, candidates.row(i), d);
    if (!tiny_query && dn.norm_sq < kUnderflowNormSq) dn = dot_and_norm_in_double(q, candidates.row(i), d);
    if (!std::isfinite(dn.dot + dn.norm_sq + q_norm)) {
      out[i] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const double denominator = q_norm * std::sqrt(dn.norm_sq);
    // A zero-norm side has no direction: cosine 0. NaN/Inf fall through to the check below.
    out[i] = denominator == 0.0 ? 0.0f : float(std::clamp(dn.dot / denominator, -1.0, 1.0));
  }
  require_finite_scores(out, candidates.rows, query, candidates, "cosine_scores");
}

Matrix cosine_matrix(MatrixView queries, MatrixView candidates) {
  require_pair(queries, candidates, "cosine_matrix");
  Matrix result(queries.rows, candidates.rows);
  for (std::size_t r = 0; r < queries.rows; ++r) {
    cosine_scores(MatrixView(queries.row(r), 1, queries.cols), candidates, result.row(r));
  }
  return result;
}

void inner_products(const float* query, const float* rows, std::size_t n, std::size_t d, float* out) {
  if (n == 0) return;
  if (query == nullptr || rows == nullptr || out == nullptr) {
    throw InvalidArgument("inner_products: a null pointer for " + std::to_string(n) + " rows");
  }
  kernels::selected().inner_products(query, rows, n, d, out);
}

}  // namespace counterpoint::scoring
