#include "counterpoint/training/verifier_trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/threads.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/torch_model.h"
#include "counterpoint/eval/metrics.h"
#include "counterpoint/scoring/token_maps.h"
#include "counterpoint/scoring/verifier_networks.h"
#include "counterpoint/training/losses.h"
#include "fine_tuning.h"
#include "run_loop.h"

namespace counterpoint::training {

namespace {

// Token vectors of every distinct text, computed once, per role.
class TokenTable {
 public:
  void add(const std::string& text, TextRole role) {
    auto& pending = role == TextRole::kQuery ? pending_queries_ : pending_documents_;
    auto& table = role == TextRole::kQuery ? queries_ : documents_;
    if (!table.count(text)) {
      table.emplace(text, Matrix());
      pending.push_back(text);
    }
  }
  void encode(const Encoder& encoder) {
    encode_role(encoder, TextRole::kQuery, pending_queries_, queries_);
    encode_role(encoder, TextRole::kDocument, pending_documents_, documents_);
  }
  Matrix map(const std::string& query, const std::string& candidate) const {
    return scoring::token_cosine_map(queries_.at(query).view(), documents_.at(candidate).view());
  }

 private:
  static void encode_role(const Encoder& encoder, TextRole role, std::vector<std::string>& pending,
                          std::unordered_map<std::string, Matrix>& table) {
    if (pending.empty()) return;
    EncodeOptions options;
    options.role = role;
    std::vector<Matrix> tokens = encoder.encode_tokens(pending, options);
    for (std::size_t i = 0; i < pending.size(); ++i) table[pending[i]] = std::move(tokens[i]);
    pending.clear();
  }
  std::unordered_map<std::string, Matrix> queries_, documents_;
  std::vector<std::string> pending_queries_, pending_documents_;
};

// The token map of each pair (query role against document role), in the order of `pairs`.
std::vector<Matrix> pair_maps(const Encoder& encoder, const std::vector<LabeledPair>& pairs) {
  TokenTable tokens;
  for (const auto& p : pairs) {
    tokens.add(p.query, TextRole::kQuery);
    tokens.add(p.candidate, TextRole::kDocument);
  }
  tokens.encode(encoder);
  std::vector<Matrix> maps;
  for (const auto& p : pairs) maps.push_back(tokens.map(p.query, p.candidate));
  return maps;
}

// InvalidArgument naming `who` unless `pairs` hold at least one paraphrase and one near-miss,
// the two classes an ROC-AUC compares.
void require_both_labels(const std::vector<LabeledPair>& pairs, const std::string& who) {
  std::size_t near_misses = 0;
  for (const auto& p : pairs) near_misses += p.near_miss;
  if (near_misses == 0 || near_misses == pairs.size()) {
    throw InvalidArgument(who + " needs at least one paraphrase and one near-miss pair (got " +
                          std::to_string(pairs.size() - near_misses) + " and " + std::to_string(near_misses) + ")");
  }
}

// scores[i] belongs to pairs[i].
NearMissReport split_by_label(const std::vector<float>& scores, const std::vector<LabeledPair>& pairs) {
  NearMissReport report;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    (pairs[i].near_miss ? report.near_miss_scores : report.paraphrase_scores).push_back(scores[i]);
  }
  report.auc = eval::roc_auc(report.paraphrase_scores, report.near_miss_scores);
  return report;
}

// Refuses a step whose forward and backward activations would not fit, instead of letting the
// operating system kill the process part-way: a rough upper estimate per map (input channels;
// for F3 the first block's conv, norm and activation outputs and gradients; for F4 the tokens
// through the layer), against half the physical memory.
void require_step_fits_in_memory(const VerifierTrainConfig& c, std::size_t negatives) {
  const double maps = double(c.batch_size) * double(c.batch_size + negatives);
  const double area = double(c.shape.map_size) * double(c.shape.map_size);
  double floats_per_map = 4.0 * area;
  if (c.shape.architecture == scoring::VerifierArchitecture::kCnn) {
    floats_per_map += 6.0 * double(c.shape.width) * area;
  } else {
    const double tokens = area / (double(c.shape.patch) * c.shape.patch) + 1.0;
    floats_per_map += 24.0 * tokens * double(std::max(c.shape.width, c.shape.feed_forward)) + 2.0 * tokens * tokens;
  }
  const double needed = maps * floats_per_map * 4.0;
  const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (memory > 0 && needed > memory / 2) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    char message[400];
    std::snprintf(message, sizeof message,
                  "train_verifier: one step over %.0f maps of %d x %d (batch_size %zu) would hold about %.1f GiB of "
                  "activations, more than half of this machine's %.1f GiB; lower batch_size, map_size or width",
                  maps, c.shape.map_size, c.shape.map_size, c.batch_size, needed / kGiB, memory / kGiB);
    throw InvalidArgument(message);
  }
}

void validate(const std::vector<Triple>& triples, const VerifierTrainConfig& c) {
  detail::require_uniform_triples(triples, "train_verifier");
  training::validate(c);
  require_step_fits_in_memory(c, triples.front().negatives.size());
}

// What a resumed run must share with the interrupted one for the two to add up to one run.
nlohmann::json config_fingerprint(const Encoder& encoder, const std::vector<Triple>& triples,
                                  const VerifierTrainConfig& c) {
  const auto& files = encoder.manifest().files;
  const auto model_sha = files.find(encoder.manifest().model_file);
  return {{"triples", triples.size()}, {"negatives", triples.front().negatives.size()},
          {"architecture", scoring::to_string(c.shape.architecture)}, {"map_size", c.shape.map_size},
          {"width", c.shape.width}, {"patch", c.shape.patch}, {"feed_forward", c.shape.feed_forward},
          {"dropout", c.shape.dropout}, {"temperature", c.temperature}, {"epochs", c.epochs},
          {"batch_size", c.batch_size}, {"learning_rate", c.learning_rate},
          {"encoder_learning_rate", c.encoder_learning_rate}, {"weight_decay", c.weight_decay},
          {"warmup_ratio", c.warmup_ratio}, {"max_grad_norm", c.max_grad_norm}, {"seed", c.seed},
          {"dev_pairs", c.dev_pairs.size()}, {"encoder", encoder.manifest().name},
          {"encoder_sha256", model_sha != files.end() ? model_sha->second : ""}};
}

std::string serialize(scoring::VerifierNetwork& network) {
  torch::serialize::OutputArchive archive;
  network.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

void restore(scoring::VerifierNetwork& network, const std::string& bytes) {
  std::istringstream in(bytes);
  torch::serialize::InputArchive archive;
  archive.load_from(in);
  network.load(archive);
}

// Where a step's token maps come from. Frozen: a table of token vectors computed once. End to
// end: the encoder being trained runs on the step's texts and the maps keep their gradients.
class StepMaps {
 public:
  StepMaps(const Encoder& encoder, bool trained, int64_t map_size)
      : encoder_(encoder), trained_(trained), map_size_(map_size) {}

  void add_texts(const std::vector<Triple>& triples) {
    if (trained_) return;
    for (const auto& t : triples) {
      table_.add(t.anchor, TextRole::kQuery);
      table_.add(t.positive, TextRole::kDocument);
      for (const auto& n : t.negatives) table_.add(n, TextRole::kDocument);
    }
    table_.encode(encoder_);
  }

  // Row i of the result: anchor i against every positive of the batch, then its own negatives.
  scoring::MapBatch batch(const std::vector<Triple>& triples, const std::vector<std::size_t>& indices) const {
    if (!trained_) {
      std::vector<Matrix> maps;
      for (std::size_t i : indices) {
        for (std::size_t j : indices) maps.push_back(table_.map(triples[i].anchor, triples[j].positive));
        for (const auto& n : triples[i].negatives) maps.push_back(table_.map(triples[i].anchor, n));
      }
      std::vector<const Matrix*> pointers;
      for (const Matrix& m : maps) pointers.push_back(&m);
      return scoring::make_map_batch(pointers, map_size_, "train_verifier");
    }
    const auto n = int64_t(indices.size());
    const auto k = int64_t(triples[indices.front()].negatives.size());
    std::vector<std::string> anchors, documents;  // documents: the positives, then each anchor's negatives
    for (std::size_t i : indices) anchors.push_back(triples[i].anchor);
    for (std::size_t i : indices) documents.push_back(triples[i].positive);
    for (std::size_t i : indices)
      for (const auto& neg : triples[i].negatives) documents.push_back(neg);
    std::vector<int64_t> query_index, candidate_index;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) query_index.push_back(i), candidate_index.push_back(j);
      for (int64_t r = 0; r < k; ++r) query_index.push_back(i), candidate_index.push_back(n + i * k + r);
    }
    const auto [queries, query_lengths] = token_states(anchors, encoder_.manifest().query_prefix);
    const auto [candidates, candidate_lengths] = token_states(documents, encoder_.manifest().document_prefix);
    return scoring::make_map_batch(queries, query_lengths, candidates, candidate_lengths, torch::tensor(query_index),
                                   torch::tensor(candidate_index), map_size_, "train_verifier");
  }

 private:
  // L2-normalised token states (zero past each text's length) and the lengths, with gradients.
  std::pair<torch::Tensor, torch::Tensor> token_states(const std::vector<std::string>& texts,
                                                       const std::string& prefix) const {
    TorchTextModel& model = encoder_.model();
    const TokenBatch tokens = model.tokenize(texts, prefix);
    const torch::Tensor states = torch::nn::functional::normalize(
        model.token_states(tokens).to(torch::kFloat32),
        torch::nn::functional::NormalizeFuncOptions().p(2).dim(2).eps(1e-12));
    return {states, tokens.attention_mask.sum(1)};
  }

  const Encoder& encoder_;
  const bool trained_;
  const int64_t map_size_;
  TokenTable table_;
};

}  // namespace

void validate(const VerifierTrainConfig& c) {
  scoring::validate(c.shape);
  detail::require_valid(c, c, c.temperature, "VerifierTrainConfig");
  detail::require_training_output_folder(c.output_dir, "VerifierTrainConfig", detail::TrainedKind::kVerifier);
  if (!c.dev_pairs.empty()) require_both_labels(c.dev_pairs, "VerifierTrainConfig.dev_pairs");
  if (!std::isfinite(c.encoder_learning_rate) || c.encoder_learning_rate < 0) {
    throw InvalidArgument("VerifierTrainConfig.encoder_learning_rate must be finite and >= 0 (0 = frozen encoder)");
  }
}

VerifierTrainReport train_verifier(const Encoder& encoder, const std::vector<Triple>& triples,
                                   const VerifierTrainConfig& given, const TrainProgressCallback& progress) {
  VerifierTrainConfig config = given;
  std::string batch_note;
  if (!triples.empty()) batch_note = detail::fit_batch_size(config, VerifierTrainConfig{}.batch_size, triples, "VerifierTrainConfig");
  validate(triples, config);
  const detail::BatchPlan plan = detail::plan_batches(triples, config, config, "train_verifier");
  torch::set_num_threads(resolve_threads(config.threads, "threads"));
  const std::size_t k = triples.front().negatives.size();

  // End to end, a private copy of the encoder is trained, so the caller's stays as it was.
  const bool end_to_end = config.encoder_learning_rate > 0;
  std::shared_ptr<Encoder> tuned;
  std::vector<torch::Tensor> encoder_params;
  if (end_to_end) {
    EncoderConfig copy_config;
    copy_config.threads = config.threads;
    tuned = Encoder::load(encoder.directory(), copy_config);
    encoder_params = detail::trainable_parameters(tuned->model().module(), tuned->manifest().name);
  }
  const Encoder& current = end_to_end ? *tuned : encoder;
  const int64_t map_size = config.shape.map_size;
  StepMaps step_maps(current, end_to_end, map_size);
  step_maps.add_texts(triples);

  // Dev maps: once for a frozen encoder, at every evaluation for one in training.
  std::vector<Matrix> dev_maps;
  if (!end_to_end) dev_maps = pair_maps(current, config.dev_pairs);

  torch::manual_seed(config.seed);
  auto network = scoring::make_verifier_network(config.shape);
  const auto adamw = [&](double lr) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(lr).weight_decay(config.weight_decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(network->parameters(), adamw(config.learning_rate));
  std::vector<double> base_rates = {config.learning_rate};
  if (end_to_end) {
    groups.emplace_back(encoder_params, adamw(config.encoder_learning_rate));
    base_rates.push_back(config.encoder_learning_rate);
  }
  torch::optim::AdamW optimizer(std::move(groups));
  const auto set_training = [&](bool on) {
    network->train(on);
    if (end_to_end) tuned->model().module().train(on);
  };

  std::string best_weights;
  std::vector<torch::Tensor> best_encoder;
  detail::LoopTask task;
  task.name = "verifier training";
  task.diverged_hint = "(try a lower learning rate)";
  task.optimizer = &optimizer;
  task.base_rates = base_rates;
  task.clipped = network->parameters();
  task.clipped.insert(task.clipped.end(), encoder_params.begin(), encoder_params.end());
  task.fingerprint = config_fingerprint(encoder, triples, config);
  task.batch_loss = [&](const std::vector<std::size_t>& batch) {
    const auto input = step_maps.batch(triples, batch);
    const auto n = int64_t(batch.size());
    auto scores = network->forward(input.maps, input.valid).view({n, n + int64_t(k)});
    return map_verifier_loss(scores, config.temperature);
  };
  task.set_training = set_training;
  if (!config.dev_pairs.empty()) {
    task.evaluate = [&] {
      if (end_to_end) dev_maps = pair_maps(current, config.dev_pairs);
      std::vector<const Matrix*> pointers;
      for (const Matrix& m : dev_maps) pointers.push_back(&m);
      const std::vector<float> scores = scoring::score_in_batches(
          pointers, map_size, "train_verifier",
          [&](const scoring::MapBatch& b) { return network->forward(b.maps, b.valid); });
      return split_by_label(scores, config.dev_pairs).auc;
    };
  }
  task.keep_best = [&] {
    best_weights = serialize(*network);
    best_encoder.clear();
    for (const auto& p : encoder_params) best_encoder.push_back(p.detach().clone());
  };
  task.restore_best = [&] {
    if (!best_weights.empty()) restore(*network, best_weights);
    if (!best_encoder.empty()) detail::copy_tensors(best_encoder, encoder_params, "the best epoch's encoder");
  };
  task.save_files = [&](const std::string& dir) {
    write_file_atomic(join_path(dir, "verifier.pt"), serialize(*network));
    detail::save_optimizer(optimizer, join_path(dir, "optimizer.pt"));
    if (!best_weights.empty()) write_file_atomic(join_path(dir, "best_verifier.pt"), best_weights);
    if (end_to_end) {
      torch::save(encoder_params, join_path(dir, "encoder.pt"));
      if (!best_encoder.empty()) torch::save(best_encoder, join_path(dir, "best_encoder.pt"));
    }
  };
  task.load_files = [&](const std::string& dir) {
    restore(*network, read_file(join_path(dir, "verifier.pt")));
    detail::load_optimizer(optimizer, join_path(dir, "optimizer.pt"));
    if (path_exists(join_path(dir, "best_verifier.pt"))) best_weights = read_file(join_path(dir, "best_verifier.pt"));
    if (end_to_end) {
      std::vector<torch::Tensor> saved;
      torch::load(saved, join_path(dir, "encoder.pt"));
      detail::copy_tensors(saved, encoder_params, join_path(dir, "encoder.pt"));
      if (path_exists(join_path(dir, "best_encoder.pt"))) torch::load(best_encoder, join_path(dir, "best_encoder.pt"));
    }
  };

  VerifierTrainReport report;
  static_cast<TrainReport&>(report) = detail::run_loop(plan, config, config, task, progress);
  if (!batch_note.empty()) report.notes.push_back(batch_note);
  set_training(false);

  nlohmann::json training = {
      {"encoder", encoder.manifest().name},
      {"data", config.data_description},
      {"triples", triples.size()},
      {"negatives_per_triple", k},
      {"loss", {{"kind", "map-verifier-infonce"}, {"temperature", config.temperature}}},
      {"hyperparameters", {{"epochs", config.epochs}, {"batch_size", config.batch_size},
                           {"learning_rate", config.learning_rate}, {"weight_decay", config.weight_decay},
                           {"warmup_ratio", config.warmup_ratio}, {"max_grad_norm", config.max_grad_norm},
                           {"seed", config.seed}, {"steps", report.steps},
                           {"encoder_learning_rate", config.encoder_learning_rate}}},
      {"final_loss", report.final_loss},
      {"dev_near_miss_auc", report.dev_scores},
  };
  if (report.best_dev_score) training["best_dev_near_miss_auc"] = *report.best_dev_score;
  if (end_to_end) training["encoder_directory"] = "encoder";
  scoring::save_verifier_directory(config.output_dir, *network, config.shape, training.dump());
  if (end_to_end) {
    report.encoder_dir = join_path(config.output_dir, "encoder");
    nlohmann::json encoder_training = training;
    encoder_training["trained_with"] = "map verifier, end to end (the verifier is its parent directory)";
    encoder_training["base"] = encoder.manifest().name;
    detail::write_model_directory(*tuned, report.encoder_dir,
                                  config.encoder_name.empty() ? encoder.manifest().name + "-verifier"
                                                              : config.encoder_name,
                                  tuned->manifest().query_prefix, encoder_training);
  }
  return report;
}

NearMissReport evaluate_near_misses(const Encoder& encoder, const std::vector<LabeledPair>& pairs,
                                    const MapScorer& scorer) {
  require_both_labels(pairs, "evaluate_near_misses");
  const std::vector<Matrix> maps = pair_maps(encoder, pairs);
  const std::vector<float> scores = scorer(maps);
  if (scores.size() != maps.size()) {
    throw InvalidArgument("evaluate_near_misses: the scorer returned " + std::to_string(scores.size()) +
                          " scores for " + std::to_string(maps.size()) + " maps");
  }
  return split_by_label(scores, pairs);
}

VerifierSourceReport train_verifier_from_source(const std::string& model, const NearMissSource& source,
                                                const VerifierTrainConfig& config,
                                                const TrainProgressCallback& progress) {
  validate(config);
  validate(source);
  const std::string model_dir = resolve_model(model);
  VerifierTrainConfig built = config;
  if (built.data_description.empty()) built.data_description = describe(source);
  if (!source.dev_pairs.empty()) built.dev_pairs = sick_near_miss_pairs(source.dev_pairs, source.min_overlap);
  auto triples = sick_near_miss_triples(source.pairs, source.min_overlap);
  VerifierSourceReport report;
  report.triples = triples.size();
  if (source.inverted_negatives) {
    text::InverterOptions edits;
    edits.edits = source.inverted_edits;
    report.inverted = add_inverted_negatives(triples, text::Inverter(edits));
  }
  EncoderConfig encoder_config;
  encoder_config.threads = config.threads;
  const auto encoder = Encoder::load(model_dir, encoder_config);
  static_cast<VerifierTrainReport&>(report) = train_verifier(*encoder, triples, built, progress);
  return report;
}

}  // namespace counterpoint::training
