#include "counterpoint/eval/alpha_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "counterpoint/core/errors.h"

using namespace counterpoint;
using namespace counterpoint::eval;

namespace {
AlphaSearch reference_search() {
  AlphaSearch search;
  search.kind = AlphaSearch::Kind::kReference;
  return search;
}
}  // namespace

// Rounds over [0, 10] for a peak at 3.14159: midpoint 3.5 keeps [3, 4]; 3.15 keeps [3.1, 3.2];
// 3.145 keeps [3.14, 3.15]; 3.1415 keeps [3.141, 3.142], narrower than 0.01 -> left edge 3.141.
TEST(AlphaReference, UnimodalObjectiveConvergesToTheLeftEdgeOfTheBestBin) {
  AlphaResult result =
      tune_alpha([](double a) { return -(a - 3.14159) * (a - 3.14159); }, reference_search());
  EXPECT_NEAR(result.best_alpha, 3.141, 1e-9);
  ASSERT_EQ(result.curve.size(), 41u);  // 4 rounds of 10 midpoints + the returned left edge
  EXPECT_EQ(result.curve[0].alpha, 0.5);
  EXPECT_NEAR(result.curve[10].alpha, 3.05, 1e-12);
  EXPECT_EQ(result.curve.back().alpha, result.best_alpha);
  EXPECT_EQ(result.best_score, result.curve.back().score);
}

// f = 1 for alpha > 7.3, else 0. Midpoint 7.5 keeps [7, 8]; 7.35 keeps [7.3, 7.4]; then the first
// bin always wins. The left edge 7.3 itself scores 0: the search reports the edge, not the
// midpoint, exactly as the reference code does.
TEST(AlphaReference, StepObjectiveReturnsTheStepPosition) {
  AlphaResult result = tune_alpha([](double a) { return a > 7.3 ? 1.0 : 0.0; }, reference_search());
  EXPECT_DOUBLE_EQ(result.best_alpha, 7.3);
  EXPECT_EQ(result.best_score, 0.0);
}

TEST(AlphaReference, FirstStrictMaximumWinsTies) {
  AlphaResult result = tune_alpha([](double) { return 0.5; }, reference_search());
  EXPECT_EQ(result.best_alpha, 0.0);
  EXPECT_EQ(result.best_score, 0.5);
}

// The default search makes the reference's 41 evaluations but returns the best of them: on the
// step objective the left edge 7.3 scores 0 while the midpoint 7.5 (first to score 1) is a best
// point; the edge is reported beside it.
TEST(AlphaInterval, ReturnsTheBestEvaluatedPointWhereTheLeftEdgeIsWorse) {
  AlphaResult result = tune_alpha([](double a) { return a > 7.3 ? 1.0 : 0.0; });
  EXPECT_DOUBLE_EQ(result.best_alpha, 7.5);
  EXPECT_EQ(result.best_score, 1.0);
  EXPECT_DOUBLE_EQ(result.reference_alpha, 7.3);
  EXPECT_EQ(result.reference_score, 0.0);
  EXPECT_EQ(result.curve.size(), 41u);
}

// A peak between two evaluated points: the left edge 3.141 is not the best evaluation (3.1415 is
// closer to 3.14159), and the result's score is the curve's maximum.
TEST(AlphaInterval, BestScoreIsTheCurvesMaximum) {
  auto peak = [](double a) { return -(a - 3.14159) * (a - 3.14159); };
  AlphaResult result = tune_alpha(peak);
  double curve_max = -1e300;
  for (const auto& p : result.curve) curve_max = std::max(curve_max, p.score);
  EXPECT_EQ(result.best_score, curve_max);
  EXPECT_NEAR(result.best_alpha, 3.1415, 1e-9);
  EXPECT_GT(result.best_score, result.reference_score);
  EXPECT_NEAR(result.reference_alpha, 3.141, 1e-9);
}

TEST(AlphaInterval, FirstStrictMaximumWinsTies) {
  AlphaResult result = tune_alpha([](double) { return 0.5; });
  EXPECT_EQ(result.best_alpha, 0.5);  // the first midpoint, the first evaluation
  EXPECT_EQ(result.best_score, 0.5);
}

TEST(AlphaSearchNames, ParseEveryKindAndRejectOthers) {
  for (auto kind : {AlphaSearch::Kind::kInterval, AlphaSearch::Kind::kReference, AlphaSearch::Kind::kGrid}) {
    EXPECT_EQ(parse_alpha_search(to_string(kind)), kind);
  }
  EXPECT_THROW(parse_alpha_search("random"), InvalidArgument);
}

TEST(AlphaGrid, ScoresEveryStepIncludingBothEnds) {
  AlphaSearch grid;
  grid.kind = AlphaSearch::Kind::kGrid;
  grid.grid_step = 0.1;
  AlphaResult result = tune_alpha([](double a) { return -(a - 3.14) * (a - 3.14); }, grid);
  ASSERT_EQ(result.curve.size(), 101u);
  EXPECT_DOUBLE_EQ(result.curve.back().alpha, 10.0);
  EXPECT_DOUBLE_EQ(result.best_alpha, 3.1);
  EXPECT_NEAR(result.best_score, -0.0016, 1e-12);
}

TEST(AlphaSearchSettings, InvalidSettingsAndScoresAreRejected) {
  auto flat = [](double) { return 0.0; };
  AlphaSearch reversed;
  reversed.lo = 5;
  reversed.hi = 1;
  EXPECT_THROW(tune_alpha(flat, reversed), InvalidArgument);
  AlphaSearch one_bin;
  one_bin.bins = 1;
  EXPECT_THROW(tune_alpha(flat, one_bin), InvalidArgument);
  AlphaSearch no_step;
  no_step.kind = AlphaSearch::Kind::kGrid;
  no_step.grid_step = 0;
  EXPECT_THROW(tune_alpha(flat, no_step), InvalidArgument);
  EXPECT_THROW(tune_alpha([](double) { return std::numeric_limits<double>::quiet_NaN(); }),
               InvalidArgument);
}

// A grid step of 1e-6 over [0, 1] would score the dev set a million times: refused before the first.
TEST(AlphaSearchSettings, ASearchOfMoreThan100000EvaluationsIsRefusedBeforeTheFirst) {
  int calls = 0;
  auto counted = [&calls](double) { return double(++calls); };
  AlphaSearch fine_grid;
  fine_grid.kind = AlphaSearch::Kind::kGrid;
  fine_grid.lo = 0;
  fine_grid.hi = 1;
  fine_grid.grid_step = 1e-6;
  try {
    tune_alpha(counted, fine_grid);
    ADD_FAILURE() << "a million-point grid was searched";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              "tune_alpha: these settings evaluate the objective 1000001 times (at most 100000): use a larger "
              "grid_step");
  }
  AlphaSearch many_bins;
  many_bins.bins = 1000000000;
  EXPECT_THROW(tune_alpha(counted, many_bins), InvalidArgument);
  EXPECT_EQ(calls, 0);
  fine_grid.grid_step = 1e-4;  // 10,001 points: allowed
  EXPECT_NO_THROW(tune_alpha(counted, fine_grid));
  EXPECT_EQ(calls, 10001);
}
