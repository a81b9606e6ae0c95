#include "counterpoint/eval/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "counterpoint/core/errors.h"

using namespace counterpoint;
using namespace counterpoint::eval;

namespace {

double metric_of(const RankedRun& run, const Qrels& qrels, const std::string& query,
                 const std::string& metric, EvalOptions options = {}) {
  return evaluate(run, qrels, {metric}, options).per_query.at(query).at(parse_metric(metric).name);
}

}  // namespace

TEST(ParseMetric, AcceptsTheDocumentedSpellingsCaseInsensitively) {
  EXPECT_EQ(parse_metric("nDCG@10").name, "ndcg@10");
  EXPECT_EQ(parse_metric("precision@5").name, "p@5");
  EXPECT_EQ(parse_metric("Recall@100").k, 100u);
  EXPECT_EQ(parse_metric("R-Precision").name, "p@r");
  EXPECT_EQ(parse_metric("accuracy@1").kind, MetricKind::kAccuracy);
  EXPECT_EQ(parse_metric("MAP").name, "map");
  EXPECT_EQ(parse_metric("map@10").name, "map@10");
  EXPECT_THROW(parse_metric("bpref@10"), InvalidArgument);
  EXPECT_THROW(parse_metric("ndcg@0"), InvalidArgument);
  EXPECT_THROW(parse_metric("ndcg@ten"), InvalidArgument);
  EXPECT_THROW(parse_metric("ndcg"), InvalidArgument);
}

// Graded nDCG worked by hand. Judgements: a=3, b=2, c=1, d=0 (c is never retrieved, x is
// unjudged). Ranking: x, b, d, a.
//   DCG@3  = 0/log2(2) + 2/log2(3) + 0/log2(4)               = 1.2618595
//   IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.2618595 + 0.5 = 4.7618595
//   nDCG@3 = 1.2618595 / 4.7618595                            = 0.2649930
//   DCG@10 = 1.2618595 + 3/log2(5) = 1.2618595 + 1.2920297  = 2.5538892
//   nDCG@10 = 2.5538892 / 4.7618595 (IDCG counts all three positives) = 0.5363218
// Relevant at ranks 1 and 3 of four, three relevant in all (one never retrieved): AP sums the
// precision at each relevant rank, 1/1 + 2/3, over the three (trec_eval's map; map_cut_2 stops at 2).
TEST(AveragePrecision, SumsPrecisionAtEachRelevantRankOverAllRelevant) {
  const RankedRun run{{"q", {{"a", 4}, {"x", 3}, {"b", 2}, {"y", 1}}}};
  const Qrels qrels{{"q", {{"a", 1}, {"b", 2}, {"c", 1}, {"x", 0}}}};
  EXPECT_NEAR(metric_of(run, qrels, "q", "map"), (1.0 + 2.0 / 3.0) / 3.0, 1e-12);
  EXPECT_NEAR(metric_of(run, qrels, "q", "map@2"), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(metric_of(run, qrels, "q", "map@100"), metric_of(run, qrels, "q", "map"), 1e-12);
}

TEST(Ndcg, GradedGainsWithTheIdealOverAllJudgedPositives) {
  Qrels qrels{{"q", {{"a", 3}, {"b", 2}, {"c", 1}, {"d", 0}}}};
  RankedRun run{{"q", {{"x", 0.9f}, {"b", 0.8f}, {"d", 0.7f}, {"a", 0.6f}}}};
  EXPECT_NEAR(metric_of(run, qrels, "q", "ndcg@3"), 0.26499301486112564, 1e-12);
  EXPECT_NEAR(metric_of(run, qrels, "q", "ndcg@10"), 0.5363218250207072, 1e-12);
}

TEST(Ndcg, RankingIsSortedByScoreWhateverOrderItArrivesIn) {
  Qrels qrels{{"q", {{"a", 3}, {"b", 2}, {"c", 1}, {"d", 0}}}};
  RankedRun shuffled{{"q", {{"a", 0.6f}, {"d", 0.7f}, {"x", 0.9f}, {"b", 0.8f}}}};
  EXPECT_NEAR(metric_of(shuffled, qrels, "q", "ndcg@10"), 0.5363218250207072, 1e-12);
}

// trec_eval breaks score ties by document id descending, so "b" is ranked above "a".
TEST(Ties, EqualScoresAreOrderedByDocumentIdDescending) {
  Qrels qrels{{"q", {{"a", 1}}}};
  RankedRun run{{"q", {{"a", 1.0f}, {"b", 1.0f}}}};
  EXPECT_EQ(metric_of(run, qrels, "q", "acc@1"), 0.0);
  EXPECT_EQ(metric_of(run, qrels, "q", "mrr@10"), 0.5);
  EXPECT_NEAR(metric_of(run, qrels, "q", "ndcg@10"), 1.0 / std::log2(3.0), 1e-12);
  std::vector<ScoredDoc> ordered = trec_order({{"a", 1.0f}, {"c", 2.0f}, {"b", 1.0f}});
  EXPECT_EQ(ordered, (std::vector<ScoredDoc>{{"c", 2.0f}, {"b", 1.0f}, {"a", 1.0f}}));
}

// Judgements a=1, b=1, c=2, z=0: R = 3. Ranking a, x, c, z, b.
TEST(SetMetrics, PrecisionRecallRPrecisionAndReciprocalRank) {
  Qrels qrels{{"q", {{"a", 1}, {"b", 1}, {"c", 2}, {"z", 0}}}};
  RankedRun run{{"q", {{"a", 0.9f}, {"x", 0.8f}, {"c", 0.7f}, {"z", 0.6f}, {"b", 0.5f}}}};
  EXPECT_EQ(metric_of(run, qrels, "q", "p@2"), 0.5);
  EXPECT_EQ(metric_of(run, qrels, "q", "recall@2"), 1.0 / 3.0);
  EXPECT_EQ(metric_of(run, qrels, "q", "p@5"), 0.6);
  EXPECT_EQ(metric_of(run, qrels, "q", "recall@5"), 1.0);
  // P@10 divides by 10 although only five documents were retrieved, as trec_eval's P_10 does.
  EXPECT_EQ(metric_of(run, qrels, "q", "p@10"), 0.3);
  // Top R = 3: a, x, c -> two relevant.
  EXPECT_EQ(metric_of(run, qrels, "q", "p@r"), 2.0 / 3.0);
  EXPECT_EQ(metric_of(run, qrels, "q", "mrr@1"), 1.0);
  EXPECT_EQ(metric_of(run, qrels, "q", "acc@1"), 1.0);
}

TEST(SetMetrics, ReciprocalRankStopsAtTheCutoff) {
  Qrels qrels{{"q", {{"c", 1}}}};
  RankedRun run{{"q", {{"a", 0.9f}, {"b", 0.8f}, {"c", 0.7f}}}};
  EXPECT_EQ(metric_of(run, qrels, "q", "mrr@2"), 0.0);
  EXPECT_EQ(metric_of(run, qrels, "q", "mrr@3"), 1.0 / 3.0);
  EXPECT_EQ(metric_of(run, qrels, "q", "acc@3"), 1.0);
}

TEST(Averaging, QueriesWithQrelsButNoRankingCountAsZeroAndUnjudgedQueriesAreIgnored) {
  Qrels qrels{{"q1", {{"a", 1}}}, {"q2", {{"b", 1}}}};
  RankedRun run{{"q1", {{"a", 1.0f}}}, {"q9", {{"b", 1.0f}}}};
  EvalResult result = evaluate(run, qrels, {"ndcg@10", "acc@1"});
  EXPECT_EQ(result.per_query.size(), 2u);
  EXPECT_EQ(result.per_query.at("q2").at("ndcg@10"), 0.0);
  EXPECT_EQ(result.per_query.count("q9"), 0u);
  EXPECT_EQ(result.mean.at("ndcg@10"), 0.5);
  EXPECT_EQ(result.mean.at("acc@1"), 0.5);
}

// "--metrics ndcg@10,ndcg@10" once reported 2.0000: a metric named twice counts once.
TEST(Averaging, AMetricNamedTwiceIsComputedAndReportedOnce) {
  Qrels qrels{{"q1", {{"a", 1}}}, {"q2", {{"b", 1}}}};
  RankedRun run{{"q1", {{"a", 1.0f}}}, {"q2", {{"b", 1.0f}}}};
  EvalResult result = evaluate(run, qrels, {"ndcg@10", "NDCG@10", "p@r", "r-precision"});
  EXPECT_EQ(result.mean.size(), 2u);
  EXPECT_EQ(result.mean.at("ndcg@10"), 1.0);
  EXPECT_EQ(result.mean.at(parse_metric("p@r").name), 1.0);
}

TEST(Averaging, QueryWhoseQrelsHoldNoPositiveScoresZero) {
  Qrels qrels{{"q", {{"a", 0}}}};
  RankedRun run{{"q", {{"a", 1.0f}}}};
  EvalResult result = evaluate(run, qrels, {"ndcg@10", "recall@10", "p@r"});
  EXPECT_EQ(result.mean, (std::map<std::string, double>{{"ndcg@10", 0.0}, {"p@r", 0.0}, {"recall@10", 0.0}}));
}

TEST(SelfExclusion, QueryIdIsRemovedFromItsOwnRankingByDefault) {
  Qrels qrels{{"q1", {{"d1", 1}}}};
  RankedRun run{{"q1", {{"q1", 1.0f}, {"d1", 0.5f}}}};
  EXPECT_EQ(metric_of(run, qrels, "q1", "acc@1"), 1.0);
  EXPECT_EQ(metric_of(run, qrels, "q1", "mrr@10"), 1.0);
  EvalOptions keep_self;
  keep_self.exclude_self = false;
  EXPECT_EQ(metric_of(run, qrels, "q1", "acc@1", keep_self), 0.0);
  EXPECT_EQ(metric_of(run, qrels, "q1", "mrr@10", keep_self), 0.5);
}

TEST(Evaluate, RejectsDuplicateDocumentsAndNonFiniteScores) {
  Qrels qrels{{"q", {{"a", 1}}}};
  EXPECT_THROW(evaluate(RankedRun{{"q", {{"a", 1.0f}, {"a", 0.5f}}}}, qrels, {"ndcg@10"}),
               InvalidArgument);
  EXPECT_THROW(evaluate(RankedRun{{"q", {{"a", std::numeric_limits<float>::quiet_NaN()}}}}, qrels,
                        {"ndcg@10"}),
               InvalidArgument);
  EXPECT_THROW(evaluate(RankedRun{}, qrels, {"bleu@4"}), InvalidArgument);
}

TEST(RocAuc, IsTheShareOfPositiveNegativePairsOrderedRightWithTiesCountingHalf) {
  EXPECT_DOUBLE_EQ(roc_auc({0.9f, 0.8f}, {0.1f, 0.2f}), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc({0.1f}, {0.9f}), 0.0);
  // Pairs: (0.5 vs 0.5) tie -> 1/2, (0.5 vs 0.1) right, (0.3 vs 0.5) wrong, (0.3 vs 0.1) right.
  EXPECT_DOUBLE_EQ(roc_auc({0.5f, 0.3f}, {0.5f, 0.1f}), 2.5 / 4.0);
  EXPECT_DOUBLE_EQ(roc_auc({1.0f, 1.0f, 1.0f}, {1.0f}), 0.5);
}

TEST(RocAuc, NeedsBothClassesAndFiniteScores) {
  EXPECT_THROW(roc_auc({}, {0.1f}), InvalidArgument);
  EXPECT_THROW(roc_auc({0.1f}, {}), InvalidArgument);
  EXPECT_THROW(roc_auc({std::numeric_limits<float>::quiet_NaN()}, {0.1f}), InvalidArgument);
}

TEST(Evaluate, EmptyQrelsAreAnErrorNotAZeroScore) {
  try {
    evaluate(RankedRun{{"q", {{"a", 1.0f}}}}, Qrels{}, {"ndcg@10"});
    ADD_FAILURE() << "empty qrels were scored";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "evaluate: the qrels judge no query");
  }
}

TEST(Evaluate, ARunThatRanksNoJudgedQueryIsAnIdMismatchNotAZeroScore) {
  // Queries read from a text file are named q1, q2, ...; BEIR's qrels may say q01, q02.
  const Qrels qrels{{"q01", {{"a", 1}}}, {"q02", {{"b", 1}}}};
  const RankedRun run{{"q1", {{"a", 1.0f}}}, {"q2", {{"b", 1.0f}}}};
  try {
    evaluate(run, qrels, {"ndcg@10"});
    ADD_FAILURE() << "a run of other query ids was scored";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              "evaluate: no query of the qrels has a ranking in the run (2 ranked queries, e.g. 'q1'; 2 judged, "
              "e.g. 'q01'): the run's query ids must be the qrels' ids");
  }
}

TEST(Evaluate, JudgedQueriesWithoutARankingScoreZeroAndAreListed) {
  const Qrels qrels{{"q1", {{"a", 1}}}, {"q2", {{"b", 1}}}, {"q3", {{"c", 1}}}};
  const RankedRun run{{"q2", {{"b", 1.0f}}}, {"other", {{"c", 1.0f}}}};
  const EvalResult result = evaluate(run, qrels, {"acc@1"});
  EXPECT_DOUBLE_EQ(result.mean.at("acc@1"), 1.0 / 3.0);  // trec_eval -c: the mean is over all three
  EXPECT_EQ(result.unranked, (std::vector<std::string>{"q1", "q3"}));
  EXPECT_EQ(describe_unranked(result), "2 of 3 judged queries have no ranking in the run (scored 0): q1, q3");
  EXPECT_EQ(describe_unranked(evaluate(RankedRun{{"q1", {{"a", 1.0f}}}}, Qrels{{"q1", {{"a", 1}}}}, {"acc@1"})), "");
}
