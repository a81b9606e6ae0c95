// counterpoint/eval/alpha_search.h: tuning the weight alpha of a combined score
// (cosine + alpha * sparsity) on a development split, by maximising an objective such as
// nDCG@10. The objective is a callback so any pipeline can be tuned.
#pragma once

#include <functional>
#include <vector>

namespace counterpoint::eval {

struct AlphaSearch {
  enum class Kind {
    // SparseCL reference search: split [lo, hi] into `bins` equal bins, score each bin's
    // midpoint, keep the bin of the first strict maximum, and repeat while the kept interval is
    // at least min_width wide (a width equal to min_width up to rounding counts as not yet
    // narrower). Returns the final interval's left edge. Defaults: 4 rounds, 40 evaluations,
    // final width 0.001.
    Interval,
    // Every lo + i * grid_step up to hi (inclusive up to rounding); first strict maximum.
    Grid,
  };
  Kind kind = Kind::Interval;
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
  // objective(best_alpha). For the interval search the left edge is scored once more after the
  // search (it is not one of the midpoints), so the reported score belongs to the returned alpha.
  double best_score = 0.0;
  std::vector<AlphaPoint> curve;  // every evaluation, in call order
};

// Invalid settings (lo >= hi, bins < 2, min_width or grid_step <= 0, non-finite bounds) and an
// objective returning NaN or infinity throw InvalidArgument.
AlphaResult tune_alpha(const std::function<double(double alpha)>& objective,
                       const AlphaSearch& search = {});

}  // namespace counterpoint::eval
