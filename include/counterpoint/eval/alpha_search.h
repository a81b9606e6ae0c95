// counterpoint/eval/alpha_search.h: tuning the weight alpha of a combined score
// (cosine + alpha * sparsity) on a development split, by maximising an objective such as
// nDCG@10. The objective is a callback so any pipeline can be tuned.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace counterpoint::eval {

struct AlphaSearch {
  enum class Kind {
    // The SparseCL reference search: split [lo, hi] into `bins` equal bins, score each bin's
    // midpoint, keep the bin of the first strict maximum, and repeat while the kept interval is
    // at least min_width wide (a width equal to min_width up to rounding counts as not yet
    // narrower); then score the final interval's left edge. Defaults: 4 rounds, 41 evaluations,
    // final width 0.001. kInterval returns the best point of all those evaluations (first strict
    // maximum in call order), which is what a caller asking for the best alpha wants: the left
    // edge is often not it.
    kInterval,
    // The same evaluations, returning the left edge as the reference code does.
    kReference,
    // Every lo + i * grid_step up to hi (inclusive up to rounding); first strict maximum.
    kGrid,
  };
  Kind kind = Kind::kInterval;
  double lo = 0.0;
  double hi = 10.0;
  int bins = 10;
  double min_width = 0.01;
  double grid_step = 0.1;
};

struct AlphaPoint {
  double alpha;
  double score;
};

struct AlphaResult {
  double best_alpha = 0.0;
  double best_score = 0.0;  // objective(best_alpha), one of the curve's points
  // The interval searches' final left edge and its score (the reference's answer), reported
  // beside the best point; NaN for the grid.
  double reference_alpha;
  double reference_score;
  std::vector<AlphaPoint> curve;  // every evaluation, in call order
};

// "interval", "reference" or "grid" -> the kind; InvalidArgument listing the names otherwise.
AlphaSearch::Kind parse_alpha_search(const std::string& name);
std::string to_string(AlphaSearch::Kind kind);

// Invalid settings (lo >= hi, bins < 2, min_width or grid_step <= 0, non-finite bounds) and an
// objective returning NaN or infinity throw InvalidArgument.
AlphaResult tune_alpha(const std::function<double(double alpha)>& objective,
                       const AlphaSearch& search = {});

}  // namespace counterpoint::eval
