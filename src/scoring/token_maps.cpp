#include "counterpoint/scoring/token_maps.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "counterpoint/core/errors.h"

namespace counterpoint::scoring {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;

void require_tokens(MatrixView tokens, const char* what) {
  if (tokens.rows == 0 || tokens.cols == 0) {
    throw InvalidArgument(std::string("token_cosine_map: ") + what + " are empty (" +
                          std::to_string(tokens.rows) + " x " + std::to_string(tokens.cols) + ")");
  }
  require_finite(tokens, (std::string("token_cosine_map: ") + what).c_str());
}

// Rows scaled to unit length (norms in double); zero rows stay zero.
RowMajor unit_rows(MatrixView tokens) {
  RowMajor unit = ConstMap(tokens.data, tokens.rows, tokens.cols);
  for (Eigen::Index r = 0; r < unit.rows(); ++r) {
    const double norm = unit.row(r).cast<double>().norm();
    if (norm > 0.0) unit.row(r) *= float(1.0 / norm);
  }
  return unit;
}

void require_map(MatrixView map, const char* function) {
  if (map.rows == 0 || map.cols == 0) {
    throw InvalidArgument(std::string(function) + ": the token map is empty (" +
                          std::to_string(map.rows) + " x " + std::to_string(map.cols) + ")");
  }
  require_finite(map, function);
}

}  // namespace

Matrix token_cosine_map(MatrixView query_tokens, MatrixView candidate_tokens) {
  require_tokens(query_tokens, "query tokens");
  require_tokens(candidate_tokens, "candidate tokens");
  require_width(candidate_tokens, query_tokens.cols, "token_cosine_map: candidate tokens");
  const RowMajor q = unit_rows(query_tokens);
  const RowMajor c = unit_rows(candidate_tokens);
  Matrix map(query_tokens.rows, candidate_tokens.rows);
  Eigen::Map<RowMajor> out(map.data(), map.rows(), map.cols());
  out.noalias() = q * c.transpose();
  // Rounding can push |cos| of parallel unit vectors just past 1.
  out = out.cwiseMax(-1.0f).cwiseMin(1.0f);
  return map;
}

float map_mean(MatrixView map) {
  require_map(map, "map_mean");
  return float(ConstMap(map.data, map.rows, map.cols).cast<double>().mean());
}

float map_maxsim(MatrixView map) {
  require_map(map, "map_maxsim");
  const ConstMap m(map.data, map.rows, map.cols);
  return float(m.rowwise().maxCoeff().cast<double>().mean());
}

float map_alignment(MatrixView map, const AlignmentOptions& options) {
  require_map(map, "map_alignment");
  if (!std::isfinite(options.lambda)) {
    throw InvalidArgument("map_alignment: lambda must be finite, got " +
                          std::to_string(options.lambda));
  }
  if (!(options.tau > 0.0f) || !std::isfinite(options.tau)) {
    throw InvalidArgument("map_alignment: tau must be finite and > 0, got " +
                          std::to_string(options.tau));
  }
  double total = 0.0;
  std::vector<double> logits(map.cols);
  for (std::size_t i = 0; i < map.rows; ++i) {
    const float* row = map.row(i);
    double max_logit = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < map.cols; ++j) {
      const double distance = i > j ? double(i - j) : double(j - i);
      logits[j] = (double(row[j]) - double(options.lambda) * distance) / double(options.tau);
      max_logit = std::max(max_logit, logits[j]);
    }
    double weight_sum = 0.0, weighted = 0.0;
    for (std::size_t j = 0; j < map.cols; ++j) {
      const double w = std::exp(logits[j] - max_logit);
      weight_sum += w;
      weighted += w * row[j];
    }
    total += weighted / weight_sum;  // weight_sum >= 1: the maximum contributes exp(0)
  }
  return float(total / double(map.rows));
}

}  // namespace counterpoint::scoring
