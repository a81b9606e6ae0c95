#include "counterpoint/eval/stance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "counterpoint/core/errors.h"

using namespace counterpoint;
using namespace counterpoint::eval;

namespace {

// Topic 1: c1, c2 pro, c3 con. Topic 2: c4 pro, c5 con.
std::map<std::string, StanceLabel> claim_labels() {
  return {{"c1", {"1", "pro"}}, {"c2", {"1", "pro"}}, {"c3", {"1", "con"}},
          {"c4", {"2", "pro"}}, {"c5", {"2", "con"}}};
}

}  // namespace

TEST(Stance, ClassifiesByTopicAndStance) {
  StanceLabel query{"1", "pro"};
  EXPECT_EQ(classify(query, {"1", "pro"}), DocumentClass::kPositive);
  EXPECT_EQ(classify(query, {"1", "con"}), DocumentClass::kHard);
  EXPECT_EQ(classify(query, {"2", "pro"}), DocumentClass::kSemiHard);
  EXPECT_EQ(classify(query, {"2", "con"}), DocumentClass::kEasy);
}

TEST(Stance, QueryAndClaimVocabulariesMapToProAndCon) {
  EXPECT_EQ(canonical_stance("support", "q"), "pro");
  EXPECT_EQ(canonical_stance("ATTACK", "q"), "con");
  EXPECT_EQ(canonical_stance("con", "q"), "con");
  EXPECT_THROW(canonical_stance("neutral", "q"), InvalidArgument);
  std::map<std::string, nlohmann::json> metadata{{"c1", {{"topic_id", "7"}, {"stance", "pro"}}}};
  EXPECT_EQ(stance_labels(metadata).at("c1").topic, "7");
  std::vector<data::Query> queries{{"t7-attack", "claim", {{"topic_id", "7"}, {"stance", "attack"}}}};
  EXPECT_EQ(stance_labels(queries).at("t7-attack").stance, "con");
  std::vector<data::Query> unlabelled{{"q", "claim", nlohmann::json::object()}};
  EXPECT_THROW(stance_labels(unlabelled), InvalidArgument);
}

// Query t1-support (topic 1, pro): positives c1, c2, so R = 2.
// Ranking c3 (hard), c1 (positive), c4 (semi-hard), c2 (positive), c5 (easy).
//   Top R = c3, c1: P@R 1/2, Hard@R 1/2, Semi@R 0, Easy@R 0.
//   nDCG@10 = (1/log2(3) + 1/log2(5)) / (1/log2(2) + 1/log2(3)) = 1.0616 / 1.6309 = 0.6509209
// Query t2-attack (topic 2, con) has one positive (c5) but no ranking: zeros, still averaged.
TEST(Stance, SharesOfTheTopRAndBinaryNdcg) {
  std::map<std::string, StanceLabel> queries{{"t1-support", {"1", "pro"}}, {"t2-attack", {"2", "con"}}};
  data::RankedRun run{
      {"t1-support", {{"c3", 0.9f}, {"c1", 0.8f}, {"c4", 0.7f}, {"c2", 0.6f}, {"c5", 0.5f}}}};
  StanceEvaluation evaluation = evaluate_stance(run, queries, claim_labels());
  const StanceScores& t1 = evaluation.per_query.at("t1-support");
  EXPECT_EQ(t1.precision_at_r, 0.5);
  EXPECT_EQ(t1.hard_at_r, 0.5);
  EXPECT_EQ(t1.semi_at_r, 0.0);
  EXPECT_EQ(t1.easy_at_r, 0.0);
  EXPECT_NEAR(t1.ndcg_at_10, 0.6509209298071326, 1e-12);
  EXPECT_EQ(evaluation.per_query.at("t2-attack").ndcg_at_10, 0.0);
  EXPECT_EQ(evaluation.mean.precision_at_r, 0.25);
  EXPECT_EQ(evaluation.mean.hard_at_r, 0.25);
  EXPECT_NEAR(evaluation.mean.ndcg_at_10, 0.6509209298071326 / 2, 1e-12);
}

TEST(Stance, SemiHardAndEasySharesCountOnlyTheTopR) {
  std::map<std::string, StanceLabel> queries{{"t1-support", {"1", "pro"}}};
  data::RankedRun run{{"t1-support", {{"c4", 0.9f}, {"c5", 0.8f}, {"c1", 0.7f}, {"c3", 0.6f}}}};
  StanceScores s = evaluate_stance(run, queries, claim_labels()).per_query.at("t1-support");
  EXPECT_EQ(s.semi_at_r, 0.5);
  EXPECT_EQ(s.easy_at_r, 0.5);
  EXPECT_EQ(s.precision_at_r, 0.0);
  EXPECT_EQ(s.hard_at_r, 0.0);
}

TEST(Stance, UnlabelledRankedDocumentIsRejected) {
  std::map<std::string, StanceLabel> queries{{"t1-support", {"1", "pro"}}};
  data::RankedRun run{{"t1-support", {{"c99", 0.9f}}}};
  EXPECT_THROW(evaluate_stance(run, queries, claim_labels()), InvalidArgument);
}
