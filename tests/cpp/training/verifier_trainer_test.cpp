// Map-verifier training: the InfoNCE loss on hand-computed values, a training run on the tiny
// model that lowers the loss and writes a loadable verifier directory, end-to-end training of a
// copy of the encoder, resuming from checkpoints, the near-miss report, and refusal of unusable
// configurations before any work.
#include "counterpoint/training/verifier_trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/torch_model.h"
#include "counterpoint/scoring/verifier_networks.h"
#include "counterpoint/scoring/token_maps.h"
#include "counterpoint/training/losses.h"

namespace counterpoint::training {
namespace {

const std::string kTinyModel = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/training/tiny-model";

std::string fresh_dir(const std::string& name) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/verifier_test_out/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Anchor "the man is playing guitar", paraphrase "some man is playing guitar", near-miss
// "the man is not playing guitar", over the tiny model's vocabulary; one group each.
std::vector<Triple> near_miss_triples() {
  const std::vector<std::string> subjects = {"man", "woman", "boy", "girl", "dog", "cat", "kids", "horse"};
  const std::vector<std::string> actions = {"playing guitar", "eating food"};
  std::vector<Triple> triples;
  for (const auto& s : subjects) {
    for (const auto& a : actions) {
      triples.push_back({"the " + s + " is " + a, "some " + s + " is " + a, {"the " + s + " is not " + a}, s + a});
    }
  }
  return triples;
}

VerifierTrainConfig tiny_config(const std::string& output_dir) {
  VerifierTrainConfig c;
  c.shape.map_size = 8;
  c.shape.width = 4;
  c.output_dir = output_dir;
  c.batch_size = 8;
  c.epochs = 15;  // 2 batches per epoch
  c.learning_rate = 0.01;
  c.threads = 1;
  return c;
}

TEST(MapVerifierLoss, IsCrossEntropyOfScoresOverTemperatureWithTheDiagonalAsTarget) {
  const auto scores = torch::tensor({{0.5f, 0.1f, -0.2f}, {0.0f, 0.3f, 0.4f}});
  const auto loss = map_verifier_loss(scores, 0.1).item<double>();
  const double row0 = -std::log(std::exp(5.0) / (std::exp(5.0) + std::exp(1.0) + std::exp(-2.0)));
  const double row1 = -std::log(std::exp(3.0) / (std::exp(0.0) + std::exp(3.0) + std::exp(4.0)));
  EXPECT_NEAR(loss, (row0 + row1) / 2.0, 1e-5);
}

TEST(MapVerifierLoss, GradientPushesTheTargetUpAndEveryOtherCandidateDown) {
  // d loss / d s_ij = (softmax(s_i / t)_j - [j == i]) / (N * t)
  auto scores = torch::tensor({{0.5f, 0.1f, -0.2f}, {0.0f, 0.3f, 0.4f}}).requires_grad_(true);
  map_verifier_loss(scores, 0.1).backward();
  const auto expected = (torch::softmax(scores.detach() / 0.1, 1) - torch::tensor({{1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f}})) /
                        (2 * 0.1);
  EXPECT_TRUE(torch::allclose(scores.grad(), expected, 1e-5, 1e-6));
  EXPECT_LT(scores.grad()[0][0].item<float>(), 0.0f);
  EXPECT_GT(scores.grad()[1][2].item<float>(), 0.0f);  // the explicit negative is pushed down
}

TEST(MapVerifierLoss, RejectsShapesWithoutADiagonalAndBadTemperatures) {
  EXPECT_THROW(map_verifier_loss(torch::zeros({3, 2}), 0.1), InvalidArgument);
  EXPECT_THROW(map_verifier_loss(torch::zeros({3}), 0.1), InvalidArgument);
  EXPECT_THROW(map_verifier_loss(torch::zeros({2, 3}), 0.0), InvalidArgument);
}

TEST(TrainVerifier, LossDecreasesAndTheDirectoryLoadsAsAVerifier) {
  auto encoder = Encoder::load(kTinyModel);
  const auto triples = near_miss_triples();
  for (auto architecture : {scoring::VerifierArchitecture::kCnn, scoring::VerifierArchitecture::kPatchTransformer}) {
    SCOPED_TRACE(scoring::to_string(architecture));
    auto config = tiny_config(fresh_dir(scoring::to_string(architecture)));
    config.shape.architecture = architecture;
    config.shape.patch = 4;
    config.dev_pairs = {{triples[0].anchor, triples[0].positive, false},
                        {triples[0].anchor, triples[0].negatives[0], true}};
    std::size_t calls = 0;
    const auto report = train_verifier(*encoder, triples, config, [&](const TrainProgress& p) {
      EXPECT_EQ(p.step, ++calls);
      return true;
    });
    ASSERT_EQ(report.steps, 30u);
    ASSERT_EQ(report.loss_curve.size(), 30u);
    ASSERT_EQ(report.dev_scores.size(), 15u);  // one near-miss AUC per epoch
    double first = 0, last = 0;
    for (std::size_t i = 0; i < 6; ++i) first += report.loss_curve[i], last += report.loss_curve[24 + i];
    EXPECT_LT(last, first * 0.9);

    const auto verifier = scoring::BuiltinMapVerifier::load(config.output_dir);
    EXPECT_EQ(verifier->shape().architecture, architecture);
    EXPECT_EQ(verifier->shape().map_size, 8);
    // The written weights are the best epoch's: scoring the dev pairs reproduces its AUC.
    const auto near_miss = evaluate_near_misses(*encoder, config.dev_pairs, [&](const std::vector<Matrix>& maps) {
      return verifier->score(maps);
    });
    EXPECT_DOUBLE_EQ(near_miss.auc, *report.best_dev_score);
  }
}

TEST(VerifierMapBatch, TensorMapsOfTheTrainedEncoderEqualTheMatrixMapsOfTheSameTexts) {
  auto encoder = Encoder::load(kTinyModel);
  const std::vector<std::string> queries = {"the man is playing guitar", "a dog"};
  const std::vector<std::string> candidates = {"some man is playing guitar", "the cat is not eating food", "cat"};
  TorchTextModel& model = encoder->model();
  const auto states = [&](const std::vector<std::string>& texts) {
    const TokenBatch batch = model.tokenize(texts, "");
    const auto normalized = torch::nn::functional::normalize(
        model.token_states(batch), torch::nn::functional::NormalizeFuncOptions().p(2).dim(2).eps(1e-12));
    return std::make_pair(normalized, batch.attention_mask.sum(1));
  };
  torch::NoGradGuard no_grad;
  const auto [q, q_lengths] = states(queries);
  const auto [c, c_lengths] = states(candidates);
  const std::vector<int64_t> qi = {0, 0, 1, 1, 0}, ci = {0, 1, 2, 0, 2};
  for (const int64_t map_size : {4, 16}) {  // cropped and padded
    SCOPED_TRACE(map_size);
    const auto from_tensors = scoring::make_map_batch(q, q_lengths, c, c_lengths, torch::tensor(qi), torch::tensor(ci),
                                                      map_size, "test");
    const auto q_rows = encoder->encode_tokens(queries);
    const auto c_rows = encoder->encode_tokens(candidates);
    std::vector<Matrix> maps;
    for (std::size_t p = 0; p < qi.size(); ++p) {
      maps.push_back(scoring::token_cosine_map(q_rows[std::size_t(qi[p])].view(), c_rows[std::size_t(ci[p])].view()));
    }
    std::vector<const Matrix*> pointers;
    for (const auto& m : maps) pointers.push_back(&m);
    const auto from_matrices = scoring::make_map_batch(pointers, map_size, "test");
    EXPECT_TRUE(torch::allclose(from_tensors.maps, from_matrices.maps, 1e-5, 1e-6));
    EXPECT_TRUE(torch::equal(from_tensors.valid, from_matrices.valid));
  }
  EXPECT_THROW(scoring::make_map_batch(q, torch::zeros({2}, torch::kLong), c, c_lengths, torch::tensor(qi),
                                       torch::tensor(ci), 4, "test"),
               InvalidArgument);
}

TEST(TrainVerifier, EndToEndTrainsACopyOfTheEncoderAndWritesItBesideTheVerifier) {
  auto encoder = Encoder::load(kTinyModel);
  const auto triples = near_miss_triples();
  const Matrix before = encoder->encode({triples[0].anchor, triples[0].positive});
  auto config = tiny_config(fresh_dir("end-to-end"));
  config.epochs = 10;
  config.encoder_learning_rate = 0.01;
  config.encoder_name = "tiny-verifier-encoder";
  config.dev_pairs = {{triples[0].anchor, triples[0].positive, false},
                      {triples[0].anchor, triples[0].negatives[0], true},
                      {triples[5].anchor, triples[5].positive, false},
                      {triples[5].anchor, triples[5].negatives[0], true}};
  const auto report = train_verifier(*encoder, triples, config);
  ASSERT_EQ(report.steps, 20u);
  double first = 0, last = 0;
  for (std::size_t i = 0; i < 4; ++i) first += report.loss_curve[i], last += report.loss_curve[16 + i];
  EXPECT_LT(last, first * 0.9);

  // The caller's encoder is unchanged; the written one is another network of the same format.
  const Matrix after = encoder->encode({triples[0].anchor, triples[0].positive});
  EXPECT_EQ(before.values(), after.values());
  ASSERT_EQ(report.encoder_dir, config.output_dir + "/encoder");
  auto tuned = Encoder::load(report.encoder_dir);
  EXPECT_EQ(tuned->manifest().name, "tiny-verifier-encoder");
  EXPECT_NE(tuned->encode({triples[0].anchor}).values(), std::vector<float>(before.row(0), before.row(0) + before.cols()));
  // The written pair (tuned encoder + best verifier) reproduces the best dev AUC.
  const auto verifier = scoring::BuiltinMapVerifier::load(config.output_dir);
  const auto near_miss = evaluate_near_misses(*tuned, config.dev_pairs, [&](const std::vector<Matrix>& maps) {
    return verifier->score(maps);
  });
  EXPECT_DOUBLE_EQ(near_miss.auc, *report.best_dev_score);
}

TEST(TrainVerifier, CancellingFromTheProgressCallbackStopsWithCancelled) {
  auto encoder = Encoder::load(kTinyModel);
  const auto config = tiny_config(fresh_dir("cancelled"));
  EXPECT_THROW(train_verifier(*encoder, near_miss_triples(), config, [](const TrainProgress& p) { return p.step < 3; }),
               Cancelled);
  EXPECT_FALSE(path_exists(config.output_dir + "/verifier.json"));
}

// Dev pairs of two triples: a paraphrase and a near-miss each.
std::vector<LabeledPair> two_dev_triples(const std::vector<Triple>& triples) {
  return {{triples[0].anchor, triples[0].positive, false},
          {triples[0].anchor, triples[0].negatives[0], true},
          {triples[5].anchor, triples[5].positive, false},
          {triples[5].anchor, triples[5].negatives[0], true}};
}

TEST(TrainVerifier, AnInterruptedRunResumedFromItsCheckpointEqualsAnUninterruptedOne) {
  auto encoder = Encoder::load(kTinyModel);
  const auto triples = near_miss_triples();
  for (const double encoder_lr : {0.0, 0.01}) {
    SCOPED_TRACE(encoder_lr > 0 ? "end to end" : "frozen encoder");
    const std::string name = encoder_lr > 0 ? "end-to-end" : "frozen";
    auto whole_config = tiny_config(fresh_dir("uninterrupted-" + name));
    whole_config.epochs = 4;
    whole_config.encoder_learning_rate = encoder_lr;
    whole_config.dev_pairs = two_dev_triples(triples);
    const auto whole = train_verifier(*encoder, triples, whole_config);

    auto config = whole_config;
    config.output_dir = fresh_dir("interrupted-" + name);
    config.checkpoint_every = 2;
    EXPECT_THROW(train_verifier(*encoder, triples, config, [](const TrainProgress& p) { return p.step < 5; }),
                 Cancelled);
    ASSERT_TRUE(path_exists(config.output_dir + "/checkpoint/state.json"));
    EXPECT_FALSE(path_exists(config.output_dir + "/verifier.json"));
    const auto resumed = train_verifier(*encoder, triples, config);
    EXPECT_EQ(resumed.resumed_from, 5u);
    EXPECT_EQ(resumed.steps, 8u);
    EXPECT_EQ(resumed.loss_curve, whole.loss_curve);
    EXPECT_EQ(resumed.dev_scores, whole.dev_scores);
    EXPECT_EQ(read_file(config.output_dir + "/weights.pt"), read_file(whole_config.output_dir + "/weights.pt"));
    if (encoder_lr > 0) {
      const auto a = Encoder::load(whole.encoder_dir)->encode({triples[3].anchor});
      const auto b = Encoder::load(resumed.encoder_dir)->encode({triples[3].anchor});
      EXPECT_EQ(a.values(), b.values());
    }
  }
}

TEST(TrainVerifier, ACheckpointOfAnotherConfigurationIsRefusedUnlessResumingIsOff) {
  auto encoder = Encoder::load(kTinyModel);
  const auto triples = near_miss_triples();
  auto config = tiny_config(fresh_dir("other-configuration"));
  config.epochs = 2;
  config.checkpoint_every = 2;
  train_verifier(*encoder, triples, config);
  auto changed = config;
  changed.learning_rate = 0.02;
  try {
    train_verifier(*encoder, triples, changed);
    ADD_FAILURE() << "a checkpoint of another learning rate was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("another configuration"), std::string::npos) << e.what();
  }
  changed.resume = false;
  EXPECT_EQ(train_verifier(*encoder, triples, changed).resumed_from, 0u);
}

// The verifier trainer shares the encoder trainer's checkpoints, checksums included.
TEST(TrainVerifier, ADamagedCheckpointIsRefusedRatherThanResumed) {
  auto encoder = Encoder::load(kTinyModel);
  const auto triples = near_miss_triples();
  auto config = tiny_config(fresh_dir("damaged-checkpoint"));
  config.epochs = 4;
  config.checkpoint_every = 2;
  EXPECT_THROW(train_verifier(*encoder, triples, config, [](const TrainProgress& p) { return p.step < 5; }),
               Cancelled);
  const std::string weights = config.output_dir + "/checkpoint/verifier.pt";
  ASSERT_TRUE(path_exists(weights));
  std::string bytes = read_file(weights);
  bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x01);
  write_file_atomic(weights, bytes);
  try {
    train_verifier(*encoder, triples, config);
    ADD_FAILURE() << "a damaged checkpoint was resumed";
  } catch (const CorruptFile& e) {
    EXPECT_NE(std::string(e.what()).find("verifier.pt fails its SHA-256 checksum"), std::string::npos) << e.what();
  }
}

TEST(TrainVerifier, ARunThatStoppedEarlyStaysStoppedWhenResumed) {
  auto encoder = Encoder::load(kTinyModel);
  const auto triples = near_miss_triples();
  auto config = tiny_config(fresh_dir("stopped-early"));
  config.dev_pairs = two_dev_triples(triples);
  config.patience = 1;
  config.checkpoint_every = 100;  // only the checkpoint written when stopping
  const auto first = train_verifier(*encoder, triples, config);
  ASSERT_TRUE(first.stopped_early);
  const auto again = train_verifier(*encoder, triples, config);
  EXPECT_TRUE(again.stopped_early);
  EXPECT_EQ(again.resumed_from, first.steps);
  EXPECT_EQ(again.steps, first.steps);
  EXPECT_EQ(again.dev_scores, first.dev_scores);
}

TEST(TrainVerifier, RefusesUnusableConfigurationsBeforeAnyWork) {
  auto encoder = Encoder::load(kTinyModel);
  const auto triples = near_miss_triples();
  const auto base = tiny_config(fresh_dir("refused"));
  auto with = [&](auto change) {
    auto c = base;
    change(c);
    return c;
  };
  EXPECT_THROW(train_verifier(*encoder, {}, base), InvalidArgument);
  EXPECT_THROW(train_verifier(*encoder, triples, with([](auto& c) { c.output_dir.clear(); })), InvalidArgument);
  EXPECT_THROW(train_verifier(*encoder, triples, with([](auto& c) { c.temperature = 0; })), InvalidArgument);
  EXPECT_THROW(train_verifier(*encoder, triples, with([](auto& c) { c.encoder_learning_rate = -1e-5; })),
               InvalidArgument);
  EXPECT_THROW(train_verifier(*encoder, triples, with([](auto& c) { c.shape.map_size = 2; })), InvalidArgument);
  EXPECT_THROW(train_verifier(*encoder, triples, with([](auto& c) { c.batch_size = 64; })), InvalidArgument);
  try {  // 72 maps of 1024 x 1024 through 4096 channels: petabytes, refused instead of killed
    train_verifier(*encoder, triples, with([](auto& c) {
      c.shape.map_size = 1024;
      c.shape.width = 4096;
    }));
    FAIL() << "an impossible step was started";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("GiB of activations"), std::string::npos) << e.what();
  }
  EXPECT_THROW(train_verifier(*encoder, triples, with([](auto& c) {
                                c.dev_pairs = {{"the man is playing guitar", "some man is playing guitar", false}};
                              })),
               InvalidArgument);
  auto uneven = triples;
  uneven[3].negatives.clear();
  EXPECT_THROW(train_verifier(*encoder, uneven, base), InvalidArgument);
  EXPECT_FALSE(path_exists(base.output_dir));
}

// A SICK pairs file: four sentences, each entailing its "some" version and contradicting its negation.
std::string write_pairs(const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::string text = "pair_ID\tsentence_A\tsentence_B\tentailment_label\tentailment_AB\tentailment_BA\trelatedness_score\n";
  int id = 0;
  for (const std::string s : {"the man is playing guitar", "the woman is eating food", "the boy is playing guitar",
                              "the girl is eating food"}) {
    const std::string some = "some" + s.substr(3), negated = s.substr(0, s.find(" is ")) + " is not" + s.substr(s.find(" is ") + 3);
    text += std::to_string(id++) + "\t" + s + "\t" + some + "\tENTAILMENT\tA_entails_B\tB_entails_A\t4.8\n";
    text += std::to_string(id++) + "\t" + s + "\t" + negated + "\tCONTRADICTION\tA_contradicts_B\tB_contradicts_A\t4.1\n";
  }
  write_file_atomic(dir + "/pairs.tsv", text);
  return dir + "/pairs.tsv";
}

TEST(TrainVerifierFromSource, BuildsNearMissTriplesWithInvertedCopiesAndDevPairs) {
  const std::string data = fresh_dir("source_data");
  NearMissSource source;
  source.pairs = write_pairs(data);
  source.dev_pairs = source.pairs;
  source.inverted_negatives = true;
  source.inverted_edits = {text::EditKind::kNegationAdded};
  auto config = tiny_config(fresh_dir("from_source"));
  config.batch_size = 4;
  config.epochs = 1;
  const auto report = train_verifier_from_source(kTinyModel, source, config);
  EXPECT_EQ(report.triples, 8u);
  EXPECT_EQ(report.inverted, 8u);
  EXPECT_EQ(report.steps, 4u);
  EXPECT_EQ(report.dev_scores.size(), 1u);
  EXPECT_EQ(describe(source), "sick-near-miss:" + source.pairs + " +inverted-negatives");
}

TEST(TrainVerifierFromSource, ValidatesConfigurationAndSourceBeforeLoadingTheModel) {
  const std::string data = fresh_dir("source_refused");
  const std::string missing_model = data + "/no-such-model";
  NearMissSource source;
  source.pairs = write_pairs(data);
  auto config = tiny_config(data + "/out");
  auto bad = config;
  bad.shape.map_size = 2;
  EXPECT_THROW(train_verifier_from_source(missing_model, source, bad), InvalidArgument);
  EXPECT_THROW(validate(bad), InvalidArgument);
  auto no_pairs = source;
  no_pairs.pairs = data + "/missing.tsv";
  EXPECT_THROW(train_verifier_from_source(missing_model, no_pairs, config), FileNotFound);
  auto overlap = source;
  overlap.min_overlap = 2;
  EXPECT_THROW(train_verifier_from_source(missing_model, overlap, config), InvalidArgument);
  auto no_edits = source;
  no_edits.inverted_negatives = true;
  no_edits.inverted_edits.clear();
  EXPECT_THROW(train_verifier_from_source(missing_model, no_edits, config), InvalidArgument);
  EXPECT_THROW(train_verifier_from_source(missing_model, source, config), FileNotFound);
  EXPECT_FALSE(path_exists(config.output_dir));
}

TEST(EvaluateNearMisses, SplitsScoresByLabelAndReportsTheirAuc) {
  auto encoder = Encoder::load(kTinyModel);
  const std::vector<LabeledPair> pairs = {{"the man is playing guitar", "the man is playing guitar", false},
                                          {"the man is playing guitar", "the dog is eating food", true},
                                          {"the cat is eating food", "the cat is eating food", false}};
  const auto report = evaluate_near_misses(*encoder, pairs, [](const std::vector<Matrix>& maps) {
    std::vector<float> out;
    for (const auto& m : maps) out.push_back(scoring::map_maxsim(m.view()));
    return out;
  });
  ASSERT_EQ(report.paraphrase_scores.size(), 2u);
  ASSERT_EQ(report.near_miss_scores.size(), 1u);
  EXPECT_NEAR(report.paraphrase_scores[0], 1.0f, 1e-5);  // identical texts: every token finds itself
  EXPECT_DOUBLE_EQ(report.auc, 1.0);
  EXPECT_THROW(evaluate_near_misses(*encoder, {pairs[0]}, [](const auto& maps) { return std::vector<float>(maps.size()); }),
               InvalidArgument);
  EXPECT_THROW(evaluate_near_misses(*encoder, pairs, [](const auto&) { return std::vector<float>(1); }),
               InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::training
