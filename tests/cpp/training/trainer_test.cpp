#include "counterpoint/training/trainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/torch_model.h"
#include "fine_tuning.h"
#include "message_of.h"

namespace counterpoint::training {
namespace {

using test_support::message_of;

const std::string kTinyModel = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/training/tiny-model";
const std::string kTsvTriples = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/training/triples.tsv";

std::string fresh_dir(const std::string& name) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/training_test_out/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Sixteen synthetic contradiction triples over the tiny model's vocabulary, one group each.
std::vector<Triple> synthetic_triples() {
  const std::vector<std::string> subjects = {"the man", "a woman", "the boy", "a girl", "the dog", "a cat",
                                             "the kids", "a horse"};
  const std::vector<std::string> actions = {"is playing guitar", "is eating food"};
  std::vector<Triple> triples;
  for (const auto& s : subjects) {
    for (const auto& a : actions) {
      triples.push_back({s + " " + a, s + " is not " + a.substr(3), {"some " + s.substr(s.find(' ') + 1) + " " + a},
                         s + "|" + a});
    }
  }
  return triples;
}

TrainConfig tiny_config(const std::string& output_dir) {
  TrainConfig c;
  c.output_dir = output_dir;
  c.batch_size = 8;
  c.epochs = 10;  // 2 batches per epoch -> 20 steps
  c.learning_rate = 0.05;
  c.temperature = 0.1;
  c.warmup_ratio = 0.1;
  c.threads = 1;
  return c;
}

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double s = 0;
  for (std::size_t i = from; i < to; ++i) s += v[i];
  return s / double(to - from);
}

TEST(MakeBatches, NoGroupOrTextTwiceInABatchAndIncompleteBatchesDropped) {
  std::vector<Triple> triples;
  for (int i = 0; i < 10; ++i) triples.push_back({"a" + std::to_string(i), "p" + std::to_string(i), {}, "g" + std::to_string(i % 5)});
  const auto batches = make_batches(triples, 4, 42, 0);
  ASSERT_EQ(batches.size(), 2u);  // 10 triples of 5 groups: two full batches of 4, two left over
  std::set<std::size_t> used;
  for (const auto& batch : batches) {
    ASSERT_EQ(batch.size(), 4u);
    std::set<std::string> groups;
    for (auto i : batch) {
      EXPECT_TRUE(groups.insert(triples[i].group).second) << "group twice in a batch";
      EXPECT_TRUE(used.insert(i).second) << "triple used twice in an epoch";
    }
  }
  EXPECT_EQ(make_batches(triples, 4, 42, 0), batches);
  EXPECT_NE(make_batches(triples, 4, 42, 1), batches);
  EXPECT_THROW(make_batches(triples, 6, 42, 0), InvalidArgument);  // only 5 groups
  EXPECT_THROW(make_batches(triples, 0, 42, 0), InvalidArgument);
}

TEST(MakeBatches, KeepsTheSameTextOutOfOneBatchEvenWithoutGroups) {
  std::vector<Triple> triples = {{"x", "y", {}, ""}, {"x", "z", {}, ""}, {"u", "v", {}, ""}, {"w", "y", {}, ""}};
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    for (const auto& batch : make_batches(triples, 2, seed, 0)) {
      const auto& a = triples[batch[0]];
      const auto& b = triples[batch[1]];
      EXPECT_NE(a.anchor, b.anchor);
      EXPECT_NE(a.positive, b.positive);
    }
  }
}

TEST(FormatProgress, ShowsStepLossThroughputAndEta) {
  TrainProgress p;
  p.step = 12;
  p.total_steps = 300;
  p.epoch = 0;
  p.loss = 0.43214;
  p.learning_rate = 1.2e-5;
  p.examples_per_second = 85.33;
  p.eta_seconds = 202;
  EXPECT_EQ(format_progress(p), "step 12/300 epoch 1 loss 0.4321 lr 1.2e-05 85.3 ex/s ETA 0:03:22");
}

TEST(Train, SparseCLLossDecreasesAndTheOutputIsALoadableModelDirectory) {
  const std::string out = fresh_dir("sparsecl");
  auto config = tiny_config(out);
  config.query_prefix = "Not true: ";
  config.data_description = "synthetic test triples";
  std::vector<std::string> lines;
  const auto report = train(kTinyModel, synthetic_triples(), config, [&](const TrainProgress& p) {
    lines.push_back(format_progress(p));
    return true;
  });
  ASSERT_EQ(report.steps, 20u);
  ASSERT_EQ(report.loss_curve.size(), 20u);
  EXPECT_EQ(lines.size(), 20u);
  EXPECT_LT(mean(report.loss_curve, 15, 20), mean(report.loss_curve, 0, 5) - 0.05);
  EXPECT_GT(report.examples_per_second, 0.0);

  auto trained = Encoder::load(out);
  const auto& m = trained->manifest();
  EXPECT_EQ(m.name, "tiny-random-test-model-sparsecl");
  EXPECT_EQ(m.query_prefix, "Not true: ");
  EXPECT_EQ(m.training["loss"]["kind"], "sparsecl");
  EXPECT_EQ(m.training["loss"]["sparsity"], "hoyer");
  EXPECT_EQ(m.training["hyperparameters"]["batch_size"], 8);
  EXPECT_EQ(m.training["hyperparameters"]["steps"], 20);
  EXPECT_EQ(m.training["data"], "synthetic test triples");
  EXPECT_EQ(m.training["base"]["name"], "tiny-random-test-model");
  EXPECT_EQ(m.training["base"]["model_sha256"], sha256_file(kTinyModel + "/model.pt"));
  // The kernels that rounded the weights: libtorch's BLAS here is OpenBLAS, whose config names its core.
  EXPECT_NE(m.training["numerics"]["blas"].get<std::string>().find("OpenBLAS "), std::string::npos);
  EXPECT_EQ(m.training["numerics"]["blas"], numeric_kernels().blas);
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  EXPECT_EQ(m.training["numerics"]["aten_cpu_capability"], capability && *capability ? capability : "auto");
  EXPECT_NE(sha256_file(out + "/model.pt"), sha256_file(kTinyModel + "/model.pt"));
  EXPECT_EQ(sha256_file(out + "/vocab.json"), sha256_file(kTinyModel + "/vocab.json"));
  const auto embeddings = trained->encode({"the man is playing guitar"});
  EXPECT_EQ(embeddings.cols(), 16u);
}

TEST(Train, ContrastiveLossDecreases) {
  auto config = tiny_config(fresh_dir("contrastive"));
  config.loss = LossKind::kContrastive;
  const auto report = train(kTinyModel, synthetic_triples(), config);
  EXPECT_LT(mean(report.loss_curve, 15, 20), mean(report.loss_curve, 0, 5) - 0.05);
}

TEST(Train, AnInterruptedRunResumedFromItsCheckpointEqualsAnUninterruptedOne) {
  const auto triples = synthetic_triples();
  auto whole_config = tiny_config(fresh_dir("uninterrupted"));
  const auto whole = train(kTinyModel, triples, whole_config);

  auto config = tiny_config(fresh_dir("interrupted"));
  config.checkpoint_every = 5;
  EXPECT_THROW(train(kTinyModel, triples, config, [](const TrainProgress& p) { return p.step < 7; }), Cancelled);
  ASSERT_TRUE(path_exists(config.output_dir + "/checkpoint/state.json"));
  const auto resumed = train(kTinyModel, triples, config);
  EXPECT_EQ(resumed.resumed_from, 7u);
  EXPECT_EQ(resumed.steps, 20u);
  EXPECT_EQ(resumed.loss_curve, whole.loss_curve);

  auto a = Encoder::load(whole_config.output_dir);
  auto b = Encoder::load(config.output_dir);
  const auto ea = a->encode({"a girl is eating food", "the dog is not playing guitar"});
  const auto eb = b->encode({"a girl is eating food", "the dog is not playing guitar"});
  EXPECT_EQ(ea.values(), eb.values());
}

// A checkpoint file with one flipped byte used to be resumed silently and end with other
// weights than an uninterrupted run: every file's SHA-256 is recorded in state.json and checked.
TEST(Train, ADamagedCheckpointIsRefusedRatherThanResumed) {
  const auto triples = synthetic_triples();
  auto config = tiny_config(fresh_dir("damaged-checkpoint"));
  config.checkpoint_every = 5;
  EXPECT_THROW(train(kTinyModel, triples, config, [](const TrainProgress& p) { return p.step < 7; }), Cancelled);
  const std::string optimizer = config.output_dir + "/checkpoint/optimizer.pt";
  std::string bytes = read_file(optimizer);
  bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x01);
  write_file_atomic(optimizer, bytes);
  try {
    train(kTinyModel, triples, config);
    FAIL() << "a damaged checkpoint was resumed";
  } catch (const CorruptFile& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer.pt fails its SHA-256 checksum"), std::string::npos) << e.what();
  }
  // A checkpoint without checksums, as older versions wrote them, is refused by name too.
  const std::string state_path = config.output_dir + "/checkpoint/state.json";
  auto state = nlohmann::json::parse(read_file(state_path));
  state.erase("files");
  write_file_atomic(state_path, state.dump());
  try {
    train(kTinyModel, triples, config);
    FAIL() << "a checkpoint without checksums was resumed";
  } catch (const CorruptFile& e) {
    EXPECT_NE(std::string(e.what()).find("records no checksums"), std::string::npos) << e.what();
  }
  config.resume = false;  // starting afresh is always possible
  EXPECT_EQ(train(kTinyModel, triples, config).resumed_from, 0u);
}

TEST(Train, HeadOnlyTrainsALinearHeadOverTheFrozenNetwork) {
  auto config = tiny_config(fresh_dir("head-only"));
  config.trained_weights = TrainedWeights::kHead;
  const auto report = train(kTinyModel, synthetic_triples(), config);
  EXPECT_LT(mean(report.loss_curve, 15, 20), mean(report.loss_curve, 0, 5) - 0.05);

  auto base = Encoder::load(kTinyModel);
  auto trained = Encoder::load(config.output_dir);
  EXPECT_EQ(trained->manifest().head_file, "head.pt");
  EXPECT_EQ(trained->manifest().training["hyperparameters"]["trained_weights"], "head");
  // The network is the base network, file and all: the pair shares one forward pass for E and Es.
  EXPECT_EQ(trained->manifest().files.at("model.pt"), base->manifest().files.at(base->manifest().model_file));
  EXPECT_TRUE(base->shares_network_with(*trained));
  const std::vector<std::string> texts = {"the man is playing guitar", "a cat is not eating food"};
  EXPECT_EQ(trained->encode_tokens(texts)[1].values(), base->encode_tokens(texts)[1].values());
  // The embeddings are the base model's pooled vectors through the written head, renormalised.
  torch::Tensor head;
  torch::load(head, config.output_dir + "/head.pt");
  const Matrix before = base->encode(texts);
  const Matrix after = trained->encode(texts);
  const auto rows = torch::from_blob(const_cast<float*>(before.row(0)), {2, int64_t(before.cols())});
  const auto expected = torch::nn::functional::normalize(rows.matmul(head.t()),
                                                         torch::nn::functional::NormalizeFuncOptions().dim(1));
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < after.cols(); ++j) EXPECT_NEAR(after.row(i)[j], expected[long(i)][long(j)].item<float>(), 1e-5);
  EXPECT_FALSE(torch::allclose(head, torch::eye(16)));
}

// The parameters of a saved TorchScript network by name.
std::map<std::string, torch::Tensor> parameters_of(const std::string& model_file) {
  auto module = torch::jit::load(model_file, torch::kCPU);
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : module.named_parameters()) out[p.name] = p.value;
  return out;
}

TEST(Train, FrozenLayersKeepTheEmbeddingsAndBottomLayersAndTrainTheRest) {
  const std::string bert = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";  // 2 layers
  auto config = tiny_config(fresh_dir("frozen-layers"));
  config.epochs = 2;
  config.frozen_layers = 1;
  const auto report = train(bert, synthetic_triples(), config);
  EXPECT_EQ(report.steps, 4u);

  const auto before = parameters_of(bert + "/model.pt");
  const auto after = parameters_of(config.output_dir + "/model.pt");
  ASSERT_EQ(before.size(), after.size());
  std::size_t frozen = 0, trained = 0;
  for (const auto& [name, value] : before) {
    const bool bottom = name.rfind("layers.0.", 0) == 0 || name.find("embedding") != std::string::npos;
    if (bottom) {
      EXPECT_TRUE(torch::equal(value, after.at(name))) << name << " changed although frozen";
      ++frozen;
    } else {
      EXPECT_FALSE(torch::equal(value, after.at(name))) << name << " did not learn";
      ++trained;
    }
    // The written model does not stay frozen: fine-tuning it again trains every layer.
    EXPECT_TRUE(after.at(name).requires_grad()) << name;
  }
  EXPECT_GT(frozen, 5u);
  EXPECT_GT(trained, 5u);
  EXPECT_EQ(Encoder::load(config.output_dir)->manifest().training["hyperparameters"]["frozen_layers"], 1);
}

TEST(Train, FrozenLayersNeedNumberedLayersAndLeaveOneToTrain) {
  const std::string bert = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";
  auto config = tiny_config(fresh_dir("frozen-refused"));
  config.frozen_layers = 2;
  try {
    train(bert, synthetic_triples(), config);
    FAIL() << "freezing every layer accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("frozen_layers 2 leaves none of model"));
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("2 layers to train (at most 1;"));
  }
  config.frozen_layers = 1;
  try {
    train(kTinyModel, synthetic_triples(), config);  // an embedding and a projection, no layers
    FAIL() << "a model without layers accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("has no numbered transformer layers"));
  }
  config.trained_weights = TrainedWeights::kHead;
  EXPECT_THROW(validate(config), InvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(config.output_dir + "/model.pt"));
}

TEST(Train, AHeadStartsAsTheIdentityAndAHeadedModelGoesOnTrainingItsHead) {
  const std::vector<std::string> texts = {"the man is playing guitar", "a cat is not eating food"};
  const auto max_difference = [&](const std::string& a, const std::string& b) {
    const Matrix x = Encoder::load(a)->encode(texts), y = Encoder::load(b)->encode(texts);
    float worst = 0;
    for (std::size_t i = 0; i < x.values().size(); ++i) worst = std::max(worst, std::abs(x.values()[i] - y.values()[i]));
    return worst;
  };
  auto first = tiny_config(fresh_dir("head-first"));
  first.trained_weights = TrainedWeights::kHead;
  train(kTinyModel, synthetic_triples(), first);
  ASSERT_GT(max_difference(kTinyModel, first.output_dir), 1e-2);

  // One step at a vanishing learning rate barely moves the head it starts from.
  auto barely = tiny_config(fresh_dir("head-barely"));
  barely.trained_weights = TrainedWeights::kHead;
  barely.learning_rate = 1e-9;
  barely.max_steps = 1;
  train(kTinyModel, synthetic_triples(), barely);
  EXPECT_LT(max_difference(kTinyModel, barely.output_dir), 1e-5);  // from the identity
  barely.output_dir = fresh_dir("head-continued");
  train(first.output_dir, synthetic_triples(), barely);
  EXPECT_LT(max_difference(first.output_dir, barely.output_dir), 1e-5);  // from the trained head
}

TEST(Train, AnInterruptedHeadOnlyRunResumesToTheSameHead) {
  auto whole = tiny_config(fresh_dir("head-uninterrupted"));
  whole.trained_weights = TrainedWeights::kHead;
  const auto uninterrupted = train(kTinyModel, synthetic_triples(), whole);
  auto config = whole;
  config.output_dir = fresh_dir("head-interrupted");
  config.checkpoint_every = 4;
  EXPECT_THROW(train(kTinyModel, synthetic_triples(), config, [](const TrainProgress& p) { return p.step < 9; }),
               Cancelled);
  const auto resumed = train(kTinyModel, synthetic_triples(), config);
  EXPECT_EQ(resumed.resumed_from, 9u);
  EXPECT_EQ(resumed.loss_curve, uninterrupted.loss_curve);
  EXPECT_EQ(read_file(config.output_dir + "/head.pt").size(), read_file(whole.output_dir + "/head.pt").size());
  torch::Tensor a, b;
  torch::load(a, whole.output_dir + "/head.pt");
  torch::load(b, config.output_dir + "/head.pt");
  EXPECT_TRUE(torch::equal(a, b));
}

TEST(Train, AnMlpHeadAddsAGeluBranchToTheLinearHeadAndResumesToTheSameWeights) {
  auto whole = tiny_config(fresh_dir("mlp-head-uninterrupted"));
  whole.trained_weights = TrainedWeights::kHead;
  whole.head_kind = HeadKind::kMlp;
  whole.head_hidden = 8;
  const auto uninterrupted = train(kTinyModel, synthetic_triples(), whole);
  auto linear = whole;
  linear.head_kind = HeadKind::kLinear;
  linear.output_dir = fresh_dir("mlp-head-linear");
  // The branch's output layer starts at zero: the first step's loss is the linear head's.
  EXPECT_NEAR(train(kTinyModel, synthetic_triples(), linear).loss_curve.at(0), uninterrupted.loss_curve.at(0), 1e-6);

  auto config = whole;
  config.output_dir = fresh_dir("mlp-head-interrupted");
  config.checkpoint_every = 4;
  EXPECT_THROW(train(kTinyModel, synthetic_triples(), config, [](const TrainProgress& p) { return p.step < 9; }),
               Cancelled);
  EXPECT_EQ(train(kTinyModel, synthetic_triples(), config).loss_curve, uninterrupted.loss_curve);

  auto base = Encoder::load(kTinyModel);
  auto trained = Encoder::load(config.output_dir);
  EXPECT_EQ(trained->manifest().head_kind, HeadKind::kMlp);
  EXPECT_EQ(trained->manifest().training["hyperparameters"]["head_hidden"], 8);
  const auto head = load_head(config.output_dir + "/head.pt");
  const auto reference = load_head(whole.output_dir + "/head.pt");
  ASSERT_EQ(head.size(), 5u);
  for (std::size_t i = 0; i < head.size(); ++i) EXPECT_TRUE(torch::equal(head[i], reference[i])) << i;
  const std::vector<std::string> texts = {"the man is playing guitar", "a cat is not eating food"};
  // The branch is not scale-invariant: it reads the pooled vectors before normalisation.
  const Matrix before = base->pooled_features(texts), after = trained->encode(texts);
  const auto f = torch::from_blob(const_cast<float*>(before.row(0)), {2, int64_t(before.cols())});
  const auto branch = torch::gelu(f.matmul(head[1].t()) + head[2]).matmul(head[3].t()) + head[4];
  const auto expected = torch::nn::functional::normalize(f.matmul(head[0].t()) + branch,
                                                         torch::nn::functional::NormalizeFuncOptions().dim(1));
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < after.cols(); ++j) EXPECT_NEAR(after.row(i)[j], expected[long(i)][long(j)].item<float>(), 1e-5);
  EXPECT_GT(head[3].abs().max().item<float>(), 0.f);  // the branch learned something

  // A headed model goes on training the head it has, of its own kind.
  auto other = tiny_config(fresh_dir("mlp-head-as-linear"));
  other.trained_weights = TrainedWeights::kHead;
  EXPECT_THAT([&] { train(config.output_dir, synthetic_triples(), other); },
              testing::ThrowsMessage<InvalidArgument>(testing::HasSubstr("has a mlp head")));
  auto network = tiny_config(fresh_dir("mlp-head-network"));
  network.head_kind = HeadKind::kMlp;
  EXPECT_THROW(train(kTinyModel, synthetic_triples(), network), InvalidArgument);
}

TEST(Train, EarlyStoppingKeepsTheBestDevScore) {
  auto config = tiny_config(fresh_dir("early"));
  config.eval_every = 2;
  config.patience = 2;
  std::vector<double> scores = {0.3, 0.5, 0.4, 0.45, 0.9};
  std::size_t calls = 0;
  config.dev_evaluation = [&](Encoder& encoder) {
    EXPECT_EQ(encoder.dim(), 16u);
    return scores.at(calls++);
  };
  const auto report = train(kTinyModel, synthetic_triples(), config);
  EXPECT_TRUE(report.stopped_early);
  EXPECT_EQ(report.steps, 8u);
  EXPECT_EQ(report.dev_scores, (std::vector<double>{0.3, 0.5, 0.4, 0.45}));
  ASSERT_TRUE(report.best_dev_score.has_value());
  EXPECT_DOUBLE_EQ(*report.best_dev_score, 0.5);
  EXPECT_EQ(Encoder::load(config.output_dir)->manifest().training["best_dev_score"], 0.5);
}

TEST(Train, ARunThatStoppedEarlyStaysStoppedWhenResumed) {
  auto config = tiny_config(fresh_dir("stopped-early"));
  config.eval_every = 2;
  config.patience = 1;
  config.checkpoint_every = 100;  // only the checkpoint written when stopping
  std::vector<double> scores = {0.3, 0.5, 0.4};
  std::size_t calls = 0;
  config.dev_evaluation = [&](Encoder&) { return scores.at(calls++); };
  const auto first = train(kTinyModel, synthetic_triples(), config);
  ASSERT_TRUE(first.stopped_early);
  ASSERT_EQ(first.steps, 6u);
  const auto again = train(kTinyModel, synthetic_triples(), config);
  EXPECT_EQ(calls, 3u);  // no further evaluation, so no further step
  EXPECT_TRUE(again.stopped_early);
  EXPECT_EQ(again.resumed_from, 6u);
  EXPECT_EQ(again.steps, 6u);
  EXPECT_EQ(again.best_dev_score, first.best_dev_score);
}

TEST(Train, RejectsInconsistentTriplesAndConfigurations) {
  auto triples = synthetic_triples();
  auto config = tiny_config(fresh_dir("rejected"));
  auto uneven = triples;
  uneven[3].negatives.push_back("an extra negative");
  EXPECT_THROW(train(kTinyModel, uneven, config), InvalidArgument);
  EXPECT_THROW(train(kTinyModel, {}, config), InvalidArgument);
  auto no_output = config;
  no_output.output_dir.clear();
  EXPECT_THROW(train(kTinyModel, triples, no_output), InvalidArgument);
  auto too_big = config;
  too_big.batch_size = 17;
  EXPECT_THROW(train(kTinyModel, triples, too_big), InvalidArgument);
  auto cold = config;
  cold.temperature = 0;
  EXPECT_THROW(train(kTinyModel, triples, cold), InvalidArgument);
  EXPECT_THROW(parse_loss_kind("triplet"), InvalidArgument);
  EXPECT_THROW(parse_trained_weights("adapter"), InvalidArgument);
}

// The message train() refuses `config` with, kNothingThrown when it trains.
std::string refusal_of(const TrainConfig& config) {
  return message_of([&] { train(kTinyModel, synthetic_triples(), config); });
}

// `train ... --out thesis` used to write model.pt, manifest.json, ... over whatever the folder held.
TEST(Train, WritesOnlyIntoANewOrEmptyFolderOrOverWhatATrainingWrote) {
  namespace fs = std::filesystem;
  auto config = tiny_config(fresh_dir("users-folder"));
  config.epochs = 1;
  fs::create_directories(config.output_dir);
  write_file_atomic(join_path(config.output_dir, "manifest.json"), "{\"mine\": 1}\n");
  write_file_atomic(join_path(config.output_dir, "notes.txt"), "my notes\n");
  EXPECT_EQ(refusal_of(config), "TrainConfig.output_dir " + config.output_dir +
                                    " holds manifest.json of a model no training wrote; training writes its files "
                                    "into that folder: choose a new or empty folder");
  EXPECT_EQ(read_file(join_path(config.output_dir, "manifest.json")), "{\"mine\": 1}\n");
  EXPECT_FALSE(fs::exists(join_path(config.output_dir, "model.pt")));

  // A model an earlier training wrote is replaced, as re-running a recipe does.
  auto again = tiny_config(fresh_dir("retrained"));
  again.epochs = 1;
  train(kTinyModel, synthetic_triples(), again);
  EXPECT_NO_THROW(train(kTinyModel, synthetic_triples(), again));
  // An installed (not trained) model's folder is the user's too.
  auto over_base = tiny_config(fresh_dir("over-base"));
  fs::copy(kTinyModel, over_base.output_dir, fs::copy_options::recursive);
  EXPECT_THROW(train(kTinyModel, synthetic_triples(), over_base), InvalidArgument);
  // A run killed before its manifest left only training files: a new run may go on there.
  auto killed = tiny_config(fresh_dir("killed"));
  fs::create_directories(killed.output_dir);
  write_file_atomic(join_path(killed.output_dir, "model.pt.partial"), "half");
  write_file_atomic(join_path(killed.output_dir, "manifest.json"), "{\"trunc");
  EXPECT_NO_THROW(train(kTinyModel, synthetic_triples(), killed));
  write_file_atomic(join_path(killed.output_dir, "notes.txt"), "mine\n");
  write_file_atomic(join_path(killed.output_dir, "manifest.json"), "{\"trunc");
  const std::string refusal = refusal_of(killed);
  EXPECT_NE(refusal.find("holds notes.txt, which no training wrote"), std::string::npos) << refusal;
}

TEST(Train, DevTriplesTuneAlphaAfterTrainingAndRecordItInTheManifest) {
  const std::string out = fresh_dir("dev_alpha");
  auto config = tiny_config(out);
  config.trained_weights = TrainedWeights::kHead;
  config.dev_triples = {kTsvTriples};
  config.dense_model = kTinyModel;
  const auto report = train(kTinyModel, synthetic_triples(), config);
  ASSERT_TRUE(report.alpha_tuning.has_value());
  EXPECT_EQ(report.triples, 16u);
  EXPECT_EQ(report.alpha_tuning->queries, 2u);
  EXPECT_EQ(report.dense_model, "tiny-random-test-model");
  const auto training = Encoder::load(out)->manifest().training;
  EXPECT_DOUBLE_EQ(training["alpha"].get<double>(), report.alpha_tuning->tuned.best_alpha);
  EXPECT_EQ(training["dev"]["dense_model"], "tiny-random-test-model");
  EXPECT_EQ(training["dev"]["triples"], nlohmann::json::array({kTsvTriples}));
  EXPECT_DOUBLE_EQ(training["dev"]["ndcg@10_cosine"].get<double>(), report.alpha_tuning->cosine_ndcg);

  auto plain = tiny_config(fresh_dir("no_dev_alpha"));
  plain.trained_weights = TrainedWeights::kHead;
  plain.epochs = 1;
  const auto untuned = train(kTinyModel, synthetic_triples(), plain);
  EXPECT_FALSE(untuned.alpha_tuning.has_value());
  EXPECT_FALSE(Encoder::load(plain.output_dir)->manifest().training.contains("alpha"));
}

TEST(TrainFromSource, BuildsTheTriplesTrainsAndDescribesTheSource) {
  auto config = tiny_config(fresh_dir("from_source"));
  config.trained_weights = TrainedWeights::kHead;
  config.batch_size = 2;
  config.epochs = 1;
  TripleSource source;
  source.triple_files = {kTsvTriples};
  const auto report = train_from_source(kTinyModel, source, config);
  EXPECT_EQ(report.triples, 2u);
  EXPECT_EQ(report.steps, 1u);
  EXPECT_EQ(Encoder::load(config.output_dir)->manifest().training["data"], "tsv:" + kTsvTriples);
}

TEST(TrainFromSource, ValidatesEverySettingBeforeLoadingAModelOrBuildingTriples) {
  const std::string out = fresh_dir("validated");
  const std::string missing_model = out + "-no-such-model";
  auto config = tiny_config(out);
  TripleSource source;
  source.triple_files = {kTsvTriples};
  // A bad number is refused before the (missing) base model is even looked up.
  auto bad = config;
  bad.learning_rate = -1;
  EXPECT_THROW(train_from_source(missing_model, source, bad), InvalidArgument);
  bad = config;
  bad.hard_negative_weight = std::nan("");
  EXPECT_THROW(train_from_source(missing_model, source, bad), InvalidArgument);
  bad = config;
  bad.dev_triples = {out + "-missing-dev.tsv"};
  EXPECT_THROW(train_from_source(missing_model, source, bad), FileNotFound);
  bad = config;
  bad.dev_triples = {kTsvTriples};
  bad.dense_model = missing_model;
  EXPECT_THROW(train_from_source(kTinyModel, source, bad), FileNotFound);
  auto no_file = source;
  no_file.triple_files = {out + "-missing.tsv"};
  EXPECT_THROW(train_from_source(missing_model, no_file, config), FileNotFound);
  TripleSource sick;
  sick.data = TripleData::kSick;
  sick.pairs = kTsvTriples;
  EXPECT_THROW(train_from_source(missing_model, sick, config), InvalidArgument);  // no dataset
  EXPECT_THROW(train_from_source(missing_model, source, config), FileNotFound);
  EXPECT_FALSE(path_exists(out));  // nothing was written

  // The output directory: not a file, not under one, not the base model's own directory.
  std::filesystem::create_directories(out);
  write_file_atomic(out + "/a-file", "x");
  auto into_file = config;
  into_file.output_dir = out + "/a-file";
  EXPECT_THROW(train_from_source(kTinyModel, source, into_file), IoError);
  into_file.output_dir = out + "/a-file/model";
  EXPECT_THROW(train_from_source(kTinyModel, source, into_file), IoError);
  auto over_base = config;
  over_base.output_dir = kTinyModel;
  EXPECT_THROW(train_from_source(kTinyModel, source, over_base), InvalidArgument);
  EXPECT_THROW(train(kTinyModel, synthetic_triples(), over_base), InvalidArgument);
}

TEST(TripleSource, NamesRoundTripAndDescribeSaysWhereTriplesCameFrom) {
  for (auto c : {StanceCurriculum::kHomogeneous, StanceCurriculum::kMixed, StanceCurriculum::kInverted}) {
    EXPECT_EQ(parse_stance_curriculum(to_string(c)), c);
  }
  TripleSource source;
  source.data = TripleData::kArguAna;
  source.dataset = "data/arguana";
  EXPECT_EQ(describe(source), "arguana:data/arguana");
  source.qrels = "data/arguana/qrels/train.tsv";
  source.negatives_per_anchor = 0;
  EXPECT_THROW(validate(source), InvalidArgument);
}

TEST(LengthChunks, GiveTheRowsOfTheWholeBatchWhilePaddingEachChunkToItsOwnLongest) {
  auto encoder = Encoder::load(kTinyModel);
  TorchTextModel& model = encoder->model();
  model.module().eval();  // no dropout: the two ways must give the same rows
  // Lengths out of order and one tie, so that the chunks reorder the rows and must put them back.
  const std::vector<std::string> texts = {"the man is playing guitar and the dog is eating food", "a cat",
                                          "the kids is eating food", "a horse", "the boy is not playing guitar"};
  const TokenBatch batch = model.tokenize(texts, "");
  torch::NoGradGuard no_grad;
  const torch::Tensor whole = model.pooled(batch, true);
  for (std::size_t chunk : {1, 2, 3, 5, 16}) {
    const torch::Tensor chunked = detail::pooled_in_length_chunks(model, batch, chunk);
    ASSERT_EQ(chunked.sizes(), whole.sizes()) << "chunk " << chunk;
    EXPECT_LT((chunked - whole).abs().max().item<float>(), 1e-5f) << "chunk " << chunk;
  }
  // One chunk of all rows pads every row to the longest; chunks of one pad nothing; chunks of two
  // pad each pair of the sorted lengths to the pair's second.
  const auto counts = batch.attention_mask.sum(1);
  std::vector<int64_t> lengths(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel());
  std::sort(lengths.begin(), lengths.end());
  const auto longest = std::size_t(lengths.back());
  EXPECT_EQ(detail::padded_tokens_in_length_chunks(batch, 16), texts.size() * longest);
  EXPECT_EQ(detail::padded_tokens_in_length_chunks(batch, 1),
            std::size_t(lengths[0] + lengths[1] + lengths[2] + lengths[3] + lengths[4]));
  EXPECT_EQ(detail::padded_tokens_in_length_chunks(batch, 2),
            std::size_t(2 * lengths[1] + 2 * lengths[3] + lengths[4]));
  EXPECT_THROW(detail::pooled_in_length_chunks(model, batch, 0), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::training
