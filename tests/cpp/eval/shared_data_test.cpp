// Metrics on the real data sets with oracle rankings built from their own judgements; skipped
// where the shared data is not mounted.
#include <gtest/gtest.h>

#include "../data/test_files.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/metadata.h"
#include "counterpoint/eval/metrics.h"
#include "counterpoint/eval/stance.h"

using namespace counterpoint;
using namespace counterpoint::eval;

namespace {

const std::string kSharedData = counterpoint::test_support::shared_data_dir();

// Judged documents ranked by grade, so every metric reaches its maximum.
RankedRun oracle_run(const Qrels& qrels) {
  RankedRun run;
  for (const auto& [query, judgements] : qrels) {
    for (const auto& [doc, grade] : judgements) run[query].push_back({doc, static_cast<float>(grade)});
  }
  return run;
}

}  // namespace

TEST(SharedData, OracleRunScoresOneOnArguanaDev) {
  if (!path_exists(kSharedData + "/arguana/corpus.jsonl")) GTEST_SKIP() << "no shared data";
  Qrels dev = data::load_qrels(data::qrels_path(kSharedData + "/arguana", "dev"));
  EvalResult result = evaluate(oracle_run(dev), dev, {"ndcg@10", "recall@100", "mrr@10", "acc@1", "p@r"});
  EXPECT_EQ(result.per_query.size(), 973u);
  for (const auto& [metric, mean] : result.mean) EXPECT_DOUBLE_EQ(mean, 1.0) << metric;
}

TEST(SharedData, IbmClaimStanceLabelsGiveAPerfectOracleOnTest) {
  if (!path_exists(kSharedData + "/ibm-claim-stance/corpus.jsonl")) GTEST_SKIP() << "no shared data";
  const std::string dir = kSharedData + "/ibm-claim-stance";
  std::map<std::string, StanceLabel> claims = stance_labels(data::load_metadata(dir + "/metadata.jsonl"));
  std::map<std::string, StanceLabel> queries = stance_labels(data::load_queries(dir + "/queries.jsonl"));
  Qrels test = data::load_qrels(data::qrels_path(dir, "test"));
  std::map<std::string, StanceLabel> test_queries;
  for (const auto& [query, judgements] : test) test_queries[query] = queries.at(query);
  EXPECT_EQ(claims.size(), 2394u);
  EXPECT_EQ(test_queries.size(), 60u);  // 30 test topics x {support, attack}

  StanceEvaluation evaluation = evaluate_stance(oracle_run(test), test_queries, claims);
  EXPECT_DOUBLE_EQ(evaluation.mean.precision_at_r, 1.0);
  EXPECT_DOUBLE_EQ(evaluation.mean.ndcg_at_10, 1.0);
  EXPECT_EQ(evaluation.mean.hard_at_r, 0.0);
}
