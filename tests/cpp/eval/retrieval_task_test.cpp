// Tuning alpha on a retrieval task held in memory, the pipeline `train --dev-triples` runs: the
// task is indexed and searched once per alpha, the best point is the curve's maximum, and the
// recorded alpha becomes the model's default for search and run.
#include "counterpoint/eval/retrieval_task.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "counterpoint/core/errors.h"
#include "counterpoint/encoder/encoder.h"

namespace counterpoint::eval {
namespace {

namespace fs = std::filesystem;
const std::string kBertTiny = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";

RetrievalTask small_task() {
  RetrievalTask task;
  task.doc_ids = {"d0", "d1", "d2", "d3", "d4"};
  task.doc_texts = {"the cat sleeps", "the cat never sleeps", "a dog barks", "dogs never bark", "rain falls"};
  task.query_ids = {"q0", "q1"};
  task.query_texts = {"the cat sleeps a lot", "a dog barks loudly"};
  task.qrels = {{"q0", {{"d1", 1}}}, {"q1", {{"d3", 1}}}};
  return task;
}

TEST(TuneAlphaOnTask, ReturnsTheBestPointOfItsCurveAndRecordsItAsTheModelsAlpha) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/retrieval_task_test/model";
  fs::remove_all(dir);
  fs::create_directories(fs::path(dir).parent_path());
  fs::copy(kBertTiny, dir, fs::copy_options::recursive);
  std::shared_ptr<Encoder> encoder = Encoder::load(dir);

  const TaskAlphaTuning tuning = tune_alpha_on_task(small_task(), encoder, encoder, scoring::Sparsity::kHoyer);
  EXPECT_EQ(tuning.queries, 2u);
  EXPECT_EQ(tuning.documents, 5u);
  EXPECT_EQ(tuning.candidates, 5u);
  ASSERT_FALSE(tuning.tuned.curve.empty());
  double best = -1;
  for (const AlphaPoint& p : tuning.tuned.curve) best = std::max(best, p.score);
  EXPECT_DOUBLE_EQ(tuning.tuned.best_score, best);
  EXPECT_GE(tuning.cosine_ndcg, 0.0);
  EXPECT_LE(tuning.cosine_ndcg, 1.0);

  record_tuned_alpha(dir, tuning, AlphaSearch{}, {{"triples", "inline"}});
  const auto reloaded = Encoder::load(dir);
  const auto chosen = retrieval::choose_alpha(std::nullopt, reloaded.get());
  EXPECT_FLOAT_EQ(chosen.value, float(tuning.tuned.best_alpha));
  EXPECT_DOUBLE_EQ(reloaded->manifest().training.at("dev").at("ndcg@10_cosine").get<double>(), tuning.cosine_ndcg);
}

TEST(TuneAlphaOnTask, RefusesAnEmptyTaskAndMissingEncoders) {
  std::shared_ptr<Encoder> encoder = Encoder::load(kBertTiny);
  EXPECT_THROW(tune_alpha_on_task(RetrievalTask{}, encoder, encoder, scoring::Sparsity::kHoyer), InvalidArgument);
  EXPECT_THROW(tune_alpha_on_task(small_task(), encoder, nullptr, scoring::Sparsity::kHoyer), InvalidArgument);
}

TEST(RankedRun, KeepsTheHitOrderAndRefusesMismatchedLengths) {
  retrieval::Hit a, b;
  a.id = "x";
  a.score = 0.9f;
  b.id = "y";
  b.score = 0.1f;
  const auto run = ranked_run({"q"}, {{a, b}});
  ASSERT_EQ(run.at("q").size(), 2u);
  EXPECT_EQ(run.at("q")[0].doc_id, "x");
  EXPECT_THROW(ranked_run({"q", "r"}, {{a}}), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::eval
