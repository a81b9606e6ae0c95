#include "counterpoint/eval/alpha_search.h"

#include <cmath>
#include <limits>
#include <string>

#include "counterpoint/core/errors.h"

namespace counterpoint::eval {
namespace {

// Relative slack so that 10 / 10 / 10 / 10 compares equal to 0.01 despite rounding.
constexpr double kWidthTolerance = 1e-9;

// The grid's last step index: lo + steps * grid_step <= hi, up to rounding.
double grid_steps(const AlphaSearch& search) {
  return std::floor((search.hi - search.lo) / search.grid_step * (1.0 + kWidthTolerance));
}

double evaluate_at(const std::function<double(double)>& objective, double alpha,
                   std::vector<AlphaPoint>& curve) {
  const double score = objective(alpha);
  if (!std::isfinite(score)) {
    throw InvalidArgument("tune_alpha: objective returned a non-finite score at alpha " +
                          std::to_string(alpha));
  }
  curve.push_back({alpha, score});
  return score;
}

void validate(const AlphaSearch& search) {
  if (!std::isfinite(search.lo) || !std::isfinite(search.hi) || !(search.lo < search.hi)) {
    throw InvalidArgument("tune_alpha: need finite lo < hi, got lo " + std::to_string(search.lo) +
                          ", hi " + std::to_string(search.hi));
  }
  if (search.kind != AlphaSearch::Kind::kGrid) {
    if (search.bins < 2) {
      throw InvalidArgument("tune_alpha: bins must be at least 2, got " + std::to_string(search.bins));
    }
    if (!(search.min_width > 0.0) || !std::isfinite(search.min_width)) {
      throw InvalidArgument("tune_alpha: min_width must be positive, got " +
                            std::to_string(search.min_width));
    }
  } else if (!(search.grid_step > 0.0) || !std::isfinite(search.grid_step)) {
    throw InvalidArgument("tune_alpha: grid_step must be positive, got " +
                          std::to_string(search.grid_step));
  }
  // Each evaluation scores a whole dev set: a search of millions of points would not end in a
  // working day, so its settings are refused before the first one.
  constexpr double kMaxEvaluations = 100000;
  double evaluations = 0;
  if (search.kind == AlphaSearch::Kind::kGrid) {
    evaluations = grid_steps(search) + 1;
  } else {
    evaluations = 1;  // the reference edge, after the last level
    for (double width = search.hi - search.lo;
         width >= search.min_width * (1.0 - kWidthTolerance) && evaluations <= kMaxEvaluations;
         width /= search.bins) {
      evaluations += search.bins;
    }
  }
  if (evaluations > kMaxEvaluations) {
    throw InvalidArgument("tune_alpha: these settings evaluate the objective " +
                          std::string(evaluations > 1e12 ? "over 10^12" : std::to_string(static_cast<long long>(evaluations))) +
                          " times (at most 100000): use a larger " +
                          (search.kind == AlphaSearch::Kind::kGrid ? "grid_step" : "min_width, or fewer bins"));
  }
}

}  // namespace

AlphaSearch::Kind parse_alpha_search(const std::string& name) {
  if (name == "interval") return AlphaSearch::Kind::kInterval;
  if (name == "reference") return AlphaSearch::Kind::kReference;
  if (name == "grid") return AlphaSearch::Kind::kGrid;
  throw InvalidArgument("alpha search method must be 'interval', 'reference' or 'grid', got '" + name + "'");
}

std::string to_string(AlphaSearch::Kind kind) {
  switch (kind) {
    case AlphaSearch::Kind::kInterval: return "interval";
    case AlphaSearch::Kind::kReference: return "reference";
    case AlphaSearch::Kind::kGrid: return "grid";
  }
  return "?";
}

AlphaResult tune_alpha(const std::function<double(double)>& objective, const AlphaSearch& search) {
  if (!objective) throw InvalidArgument("tune_alpha: objective is empty");
  validate(search);
  AlphaResult result;
  result.reference_alpha = result.reference_score = std::numeric_limits<double>::quiet_NaN();

  if (search.kind == AlphaSearch::Kind::kGrid) {
    const auto steps = static_cast<long>(grid_steps(search));
    for (long i = 0; i <= steps; ++i) {
      const double alpha = search.lo + static_cast<double>(i) * search.grid_step;
      const double score = evaluate_at(objective, alpha, result.curve);
      if (i == 0 || score > result.best_score) {
        result.best_alpha = alpha;
        result.best_score = score;
      }
    }
    return result;
  }

  double left = search.lo;
  double width = search.hi - search.lo;
  while (width >= search.min_width * (1.0 - kWidthTolerance)) {
    const double bin_width = width / search.bins;
    int best_bin = 0;
    double best_score = 0.0;
    for (int b = 0; b < search.bins; ++b) {
      const double midpoint = left + (b + 0.5) * bin_width;
      const double score = evaluate_at(objective, midpoint, result.curve);
      if (b == 0 || score > best_score) {
        best_bin = b;
        best_score = score;
      }
    }
    left += best_bin * bin_width;
    width = bin_width;
  }
  result.reference_alpha = left;
  result.reference_score = evaluate_at(objective, left, result.curve);
  if (search.kind == AlphaSearch::Kind::kReference) {
    result.best_alpha = result.reference_alpha;
    result.best_score = result.reference_score;
    return result;
  }
  result.best_alpha = result.curve.front().alpha;
  result.best_score = result.curve.front().score;
  for (const AlphaPoint& point : result.curve) {
    if (point.score > result.best_score) {
      result.best_alpha = point.alpha;
      result.best_score = point.score;
    }
  }
  return result;
}

}  // namespace counterpoint::eval
