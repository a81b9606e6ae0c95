// The one loop both trainers run, driven by a one-parameter task: each step's randomness is
// seeded with seed + step, the learning rate follows warm-up then decay, dev evaluations keep
// the best weights and stop early, checkpoints name their fields once (an older verifier
// checkpoint is refused by name), and a resumed run ends where an uninterrupted one does.
#include "run_loop.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/training/trainer.h"
#include "fine_tuning.h"

namespace counterpoint::training::detail {
namespace {

std::string fresh_dir(const std::string& name) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/training_loop_test_out/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Eight triples of distinct texts: with batch size 2, four steps per epoch.
std::vector<Triple> eight_triples() {
  std::vector<Triple> triples;
  for (int i = 0; i < 8; ++i) {
    triples.push_back({"anchor " + std::to_string(i), "positive " + std::to_string(i), {}, ""});
  }
  return triples;
}

// Minimises (w - 3)^2; records the first random draw of every step and the dev scores it is
// told to return, one per evaluation.
struct QuadraticTask {
  torch::Tensor w = torch::zeros({1}, torch::requires_grad());
  torch::optim::AdamW optimizer{std::vector<torch::Tensor>{w}, torch::optim::AdamWOptions(0.1)};
  std::vector<float> draws;
  std::vector<double> scripted_scores;
  std::size_t evaluations = 0;
  float best = -1, restored = -1;
  LoopTask task;

  explicit QuadraticTask(bool with_dev) {
    task.name = "quadratic training";
    task.optimizer = &optimizer;
    task.base_rates = {0.1};
    task.clipped = {w};
    task.fingerprint = {{"task", "quadratic"}};
    task.batch_loss = [this](const std::vector<std::size_t>&) {
      draws.push_back(torch::rand({1}).item<float>());
      return (w - 3).pow(2).sum();
    };
    task.set_training = [](bool) {};
    if (with_dev) task.evaluate = [this] { return scripted_scores.at(evaluations++); };
    task.keep_best = [this] { best = w.item<float>(); };
    task.restore_best = [this] {
      restored = best;
      torch::NoGradGuard no_grad;
      w.fill_(best);
    };
    task.save_files = [this](const std::string& dir) {
      torch::save(w.detach(), join_path(dir, "w.pt"));
      save_optimizer(optimizer, join_path(dir, "optimizer.pt"));
    };
    task.load_files = [this](const std::string& dir) {
      torch::Tensor saved;
      torch::load(saved, join_path(dir, "w.pt"));
      copy_tensors({saved}, {w}, "w.pt");
      load_optimizer(optimizer, join_path(dir, "optimizer.pt"));
    };
  }
};

OptimizerSettings two_epochs_of_pairs() {
  OptimizerSettings s;
  s.epochs = 2;
  s.batch_size = 2;
  s.seed = 7;
  return s;
}

TEST(TrainingLoop, SeedsEveryStepWithSeedPlusItsIndex) {
  const auto settings = two_epochs_of_pairs();
  LoopSettings loop;
  loop.output_dir = fresh_dir("seeds");
  QuadraticTask quadratic(false);
  const auto plan = plan_batches(eight_triples(), settings, loop, "test");
  ASSERT_EQ(plan.size(), 8u);
  run_loop(plan, settings, loop, quadratic.task, {});
  ASSERT_EQ(quadratic.draws.size(), 8u);
  for (std::size_t step = 0; step < 8; ++step) {
    torch::manual_seed(settings.seed + step);
    EXPECT_EQ(quadratic.draws[step], torch::rand({1}).item<float>()) << "step " << step;
  }
}

TEST(TrainingLoop, RampsTheLearningRateOverTheWarmUpThenDecaysItToZero) {
  auto settings = two_epochs_of_pairs();
  settings.warmup_ratio = 0.25;  // 2 of 8 steps
  LoopSettings loop;
  loop.output_dir = fresh_dir("schedule");
  QuadraticTask quadratic(false);
  std::vector<double> rates;
  run_loop(plan_batches(eight_triples(), settings, loop, "test"), settings, loop, quadratic.task,
           [&](const TrainProgress& p) {
             rates.push_back(p.learning_rate);
             return true;
           });
  const std::vector<double> expected = {0.05, 0.1, 0.1, 5 * 0.1 / 6, 4 * 0.1 / 6, 3 * 0.1 / 6, 2 * 0.1 / 6,
                                        0.1 / 6};
  ASSERT_EQ(rates.size(), expected.size());
  for (std::size_t i = 0; i < rates.size(); ++i) EXPECT_NEAR(rates[i], expected[i], 1e-12) << "step " << i;
}

TEST(TrainingLoop, EvaluatesEveryEvalEveryStepsKeepsTheBestAndStopsAfterPatience) {
  const auto settings = two_epochs_of_pairs();
  LoopSettings loop;
  loop.output_dir = fresh_dir("patience");
  loop.eval_every = 2;
  loop.patience = 2;
  QuadraticTask quadratic(true);
  quadratic.scripted_scores = {0.1, 0.5, 0.3, 0.2};
  const auto report = run_loop(plan_batches(eight_triples(), settings, loop, "test"), settings, loop,
                               quadratic.task, {});
  EXPECT_EQ(report.steps, 8u);  // the fourth evaluation, after the last step, is the second without a new best
  EXPECT_EQ(report.dev_scores, (std::vector<double>{0.1, 0.5, 0.3, 0.2}));
  ASSERT_TRUE(report.best_dev_score.has_value());
  EXPECT_DOUBLE_EQ(*report.best_dev_score, 0.5);
  EXPECT_TRUE(report.stopped_early);
  EXPECT_GT(quadratic.restored, 0.0f);
  EXPECT_EQ(quadratic.w.item<float>(), quadratic.restored);  // the weights of the second evaluation
}

TEST(TrainingLoop, EvaluatesAfterEachEpochByDefault) {
  const auto settings = two_epochs_of_pairs();
  LoopSettings loop;
  loop.output_dir = fresh_dir("per-epoch");
  QuadraticTask quadratic(true);
  quadratic.scripted_scores = {0.4, 0.6};
  const auto report = run_loop(plan_batches(eight_triples(), settings, loop, "test"), settings, loop,
                               quadratic.task, {});
  EXPECT_EQ(report.dev_scores, (std::vector<double>{0.4, 0.6}));
  EXPECT_FALSE(report.stopped_early);
}

TEST(TrainingLoop, CheckpointStateNamesEvaluationsWithoutImprovement) {
  const auto settings = two_epochs_of_pairs();
  LoopSettings loop;
  loop.output_dir = fresh_dir("state-keys");
  loop.checkpoint_every = 4;
  QuadraticTask quadratic(true);
  quadratic.scripted_scores = {0.4, 0.3};
  run_loop(plan_batches(eight_triples(), settings, loop, "test"), settings, loop, quadratic.task, {});
  const auto state = nlohmann::json::parse(read_file(loop.output_dir + "/checkpoint/state.json"));
  EXPECT_EQ(state.at("step"), 8);
  EXPECT_EQ(state.at("evaluations_without_improvement"), 1);
  EXPECT_FALSE(state.contains("epochs_without_improvement"));
  EXPECT_EQ(state.at("config").at("total_steps"), 8);
}

TEST(TrainingLoop, RefusesACheckpointOfTheEarlierVerifierTrainerByName) {
  const auto settings = two_epochs_of_pairs();
  LoopSettings loop;
  loop.output_dir = fresh_dir("old-keys");
  loop.checkpoint_every = 4;
  loop.max_steps = 4;
  {
    QuadraticTask quadratic(false);
    run_loop(plan_batches(eight_triples(), settings, loop, "test"), settings, loop, quadratic.task, {});
  }
  const std::string state_path = loop.output_dir + "/checkpoint/state.json";
  auto state = nlohmann::json::parse(read_file(state_path));
  state["epochs_without_improvement"] = state["evaluations_without_improvement"];
  state.erase("evaluations_without_improvement");
  write_file_atomic(state_path, state.dump());
  QuadraticTask again(false);
  try {
    run_loop(plan_batches(eight_triples(), settings, loop, "test"), settings, loop, again.task, {});
    FAIL() << "an earlier verifier checkpoint was resumed";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("earlier version"), std::string::npos) << e.what();
  }
}

TEST(TrainingLoop, AResumedRunEndsWhereAnUninterruptedOneDoes) {
  const auto settings = two_epochs_of_pairs();
  LoopSettings whole;
  whole.output_dir = fresh_dir("uninterrupted");
  QuadraticTask uninterrupted(false);
  const auto plan = plan_batches(eight_triples(), settings, whole, "test");
  const auto expected = run_loop(plan, settings, whole, uninterrupted.task, {});

  LoopSettings loop;
  loop.output_dir = fresh_dir("interrupted");
  loop.checkpoint_every = 100;  // only the checkpoint written on cancelling
  {
    QuadraticTask first(false);
    EXPECT_THROW(run_loop(plan, settings, loop, first.task, [](const TrainProgress& p) { return p.step < 3; }),
                 Cancelled);
  }
  QuadraticTask second(false);
  const auto resumed = run_loop(plan, settings, loop, second.task, {});
  EXPECT_EQ(resumed.resumed_from, 3u);
  EXPECT_EQ(resumed.loss_curve, expected.loss_curve);
  EXPECT_EQ(second.w.item<float>(), uninterrupted.w.item<float>());
  EXPECT_EQ(std::vector<float>(second.draws.begin(), second.draws.end()),
            std::vector<float>(uninterrupted.draws.begin() + 3, uninterrupted.draws.end()));
}

TEST(TrainingLoop, PlanIsCutAtMaxStepsAndRefusesTriplesThatMakeNoBatch) {
  auto settings = two_epochs_of_pairs();
  LoopSettings loop;
  loop.output_dir = fresh_dir("plan");
  loop.max_steps = 5;
  EXPECT_EQ(plan_batches(eight_triples(), settings, loop, "test").size(), 5u);
  settings.batch_size = 9;
  EXPECT_THROW(plan_batches(eight_triples(), settings, loop, "test"), InvalidArgument);
}

TEST(BatchSize, TheDefaultIsLoweredToTheTriplesAndSaysSo) {
  OptimizerSettings settings;  // batch size 64, eight triples without groups
  EXPECT_EQ(fit_batch_size(settings, 64, eight_triples(), "TrainConfig"), "batch size 8 (the 8 triples; default 64)");
  EXPECT_EQ(settings.batch_size, 8u);
  EXPECT_EQ(fit_batch_size(settings, 64, eight_triples(), "TrainConfig"), "");  // fits now: nothing to say
}

TEST(BatchSize, AChosenBatchSizeThatDoesNotFitIsRefusedNotChanged) {
  OptimizerSettings settings;
  settings.batch_size = 9;
  try {
    fit_batch_size(settings, 64, eight_triples(), "TrainConfig");
    FAIL() << "batch size 9 over 8 triples was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              "TrainConfig.batch_size 9 exceeds the 8 triples (a batch holds each triple once): give at most 8, or "
              "no batch size to have one that fits the triples");
  }
  EXPECT_EQ(settings.batch_size, 9u);
}

TEST(BatchSize, GroupsBoundABatchAndAreCountedOnce) {
  std::vector<Triple> triples = eight_triples();
  for (std::size_t i = 0; i < triples.size(); ++i) triples[i].group = "g" + std::to_string(i % 3);
  OptimizerSettings settings;
  EXPECT_EQ(fit_batch_size(settings, 64, triples, "VerifierTrainConfig"),
            "batch size 3 (the 3 distinct groups of the triples; default 64)");
}

TEST(FewDevQueries, AreWarnedAboutInOneWording) {
  EXPECT_EQ(few_dev_queries_warning("alpha", 2, "alpha"),
            "alpha tuned on 2 dev queries (fewer than 20): it may not carry over; give more dev triples or pass alpha "
            "at search time");
  EXPECT_EQ(few_dev_queries_warning("alpha", 1, "alpha").substr(0, 29), "alpha tuned on 1 dev query (f");
  EXPECT_EQ(few_dev_queries_warning("alpha", kFewDevQueries, "alpha"), "");
}

}  // namespace
}  // namespace counterpoint::training::detail
