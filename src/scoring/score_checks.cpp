#include "score_checks.h"

#include <cmath>
#include <string>

#include "counterpoint/core/errors.h"

namespace counterpoint::scoring::detail {

void require_query_row(MatrixView query, const char* what) {
  if (query.rows != 1) {
    throw InvalidArgument(std::string(what) + ": expected exactly one query row, got " +
                          std::to_string(query.rows));
  }
}

void require_pair(MatrixView query, MatrixView candidates, const char* function) {
  if (query.cols == 0) {
    throw InvalidArgument(std::string(function) + ": embeddings have width 0");
  }
  require_width(candidates, query.cols, (std::string(function) + ": candidates").c_str());
  if (candidates.rows > 0 && candidates.data == nullptr) {
    throw InvalidArgument(std::string(function) + ": candidates have no data pointer");
  }
}

void require_finite_scores(const float* scores, std::size_t n, MatrixView query,
                           MatrixView candidates, const char* function) {
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(scores[i])) continue;
    require_finite(query, (std::string(function) + ": query").c_str());
    require_finite(candidates, (std::string(function) + ": candidates").c_str());
    throw InvalidArgument(std::string(function) + ": candidate row " + std::to_string(i) +
                          " overflows float (values too large, |x|^2 > 3.4e38)");
  }
}

}  // namespace counterpoint::scoring::detail
