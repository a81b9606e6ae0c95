#include "counterpoint/training/verifier_trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <sstream>
#include <thread>
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
#include "training_checks.h"

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
  scoring::validate(c.shape);
  detail::require_uniform_triples(triples, "train_verifier");
  detail::require_valid({c.epochs, c.temperature, c.learning_rate, c.weight_decay, c.warmup_ratio, c.max_grad_norm,
                         c.threads},
                        c.output_dir, "VerifierTrainConfig");
  if (c.batch_size < 1) throw InvalidArgument("VerifierTrainConfig.batch_size must be >= 1");
  require_step_fits_in_memory(c, triples.front().negatives.size());
  if (!c.dev_pairs.empty()) require_both_labels(c.dev_pairs, "VerifierTrainConfig.dev_pairs");
  if (!std::isfinite(c.encoder_learning_rate) || c.encoder_learning_rate < 0) {
    throw InvalidArgument("VerifierTrainConfig.encoder_learning_rate must be finite and >= 0 (0 = frozen encoder)");
  }
}

// What a resumed run must share with the interrupted one for the two to add up to one run.
nlohmann::json config_fingerprint(const Encoder& encoder, const std::vector<Triple>& triples,
                                  const VerifierTrainConfig& c, std::size_t total_steps) {
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
          {"encoder_sha256", model_sha != files.end() ? model_sha->second : ""}, {"total_steps", total_steps}};
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

VerifierTrainReport train_verifier(const Encoder& encoder, const std::vector<Triple>& triples,
                                   const VerifierTrainConfig& config, const TrainProgressCallback& progress) {
  validate(triples, config);
  torch::set_num_threads(resolve_threads(config.threads, "threads"));
  const std::size_t k = triples.front().negatives.size();
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> plan;  // (epoch, triple indices)
  for (std::size_t epoch = 0; epoch < config.epochs; ++epoch) {
    for (auto& batch : make_batches(triples, config.batch_size, config.seed, epoch)) plan.emplace_back(epoch, std::move(batch));
  }
  if (plan.empty()) {
    throw InvalidArgument("train_verifier: " + std::to_string(triples.size()) + " triples make no complete batch of " +
                          std::to_string(config.batch_size));
  }

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
  std::vector<torch::Tensor> clipped = network->parameters();
  clipped.insert(clipped.end(), encoder_params.begin(), encoder_params.end());
  const std::size_t total = plan.size();
  const auto warmup = std::size_t(std::ceil(config.warmup_ratio * double(total)));
  const auto set_training = [&](bool on) {
    network->train(on);
    if (end_to_end) tuned->model().module().train(on);
  };

  VerifierTrainReport report;
  report.output_dir = config.output_dir;
  std::string best_weights;
  std::vector<torch::Tensor> best_encoder;
  std::size_t epochs_without_improvement = 0;
  std::size_t first_step = 0;

  // A checkpoint after `steps` steps: every step's randomness derives from its index, so the
  // state below is all a resumed run needs to continue exactly.
  const auto fingerprint = config_fingerprint(encoder, triples, config, total);
  const auto save_checkpoint = [&](std::size_t steps) {
    nlohmann::json state = {{"step", steps}, {"loss_curve", report.loss_curve}, {"dev_scores", report.dev_scores},
                            {"epochs_without_improvement", epochs_without_improvement},
                            {"stopped_early", report.stopped_early}};
    if (report.best_dev_score) state["best_dev_score"] = *report.best_dev_score;
    detail::write_checkpoint(config.output_dir, state, fingerprint, [&](const std::string& dir) {
      write_file_atomic(join_path(dir, "verifier.pt"), serialize(*network));
      detail::save_optimizer(optimizer, join_path(dir, "optimizer.pt"));
      if (!best_weights.empty()) write_file_atomic(join_path(dir, "best_verifier.pt"), best_weights);
      if (end_to_end) {
        torch::save(encoder_params, join_path(dir, "encoder.pt"));
        if (!best_encoder.empty()) torch::save(best_encoder, join_path(dir, "best_encoder.pt"));
      }
    });
  };
  if (config.resume) {
    const bool resumed = detail::read_checkpoint(
        config.output_dir, fingerprint,
        [&](const nlohmann::json& state) {
          first_step = state.at("step").get<std::size_t>();
          report.loss_curve = state.at("loss_curve").get<std::vector<double>>();
          report.dev_scores = state.at("dev_scores").get<std::vector<double>>();
          epochs_without_improvement = state.at("epochs_without_improvement").get<std::size_t>();
          if (state.contains("best_dev_score")) report.best_dev_score = state["best_dev_score"].get<double>();
          report.stopped_early = state.value("stopped_early", false);
          if (first_step == 0 || first_step > total || report.loss_curve.size() != first_step) {
            throw CorruptFile("checkpoint state of " + config.output_dir + " is inconsistent (step " +
                              std::to_string(first_step) + ", " + std::to_string(report.loss_curve.size()) +
                              " losses, " + std::to_string(total) + " steps in all)");
          }
        },
        [&](const std::string& dir) {
          restore(*network, read_file(join_path(dir, "verifier.pt")));
          detail::load_optimizer(optimizer, join_path(dir, "optimizer.pt"));
          if (path_exists(join_path(dir, "best_verifier.pt"))) best_weights = read_file(join_path(dir, "best_verifier.pt"));
          if (end_to_end) {
            std::vector<torch::Tensor> saved;
            torch::load(saved, join_path(dir, "encoder.pt"));
            detail::copy_tensors(saved, encoder_params, join_path(dir, "encoder.pt"));
            if (path_exists(join_path(dir, "best_encoder.pt"))) {
              torch::load(best_encoder, join_path(dir, "best_encoder.pt"));
            }
          }
        });
    if (resumed) report.resumed_from = report.steps = first_step;
  }
  auto evaluate = [&] {
    set_training(false);
    if (end_to_end) dev_maps = pair_maps(current, config.dev_pairs);
    std::vector<const Matrix*> pointers;
    for (const Matrix& m : dev_maps) pointers.push_back(&m);
    const std::vector<float> scores = scoring::score_in_batches(
        pointers, map_size, "train_verifier", [&](const scoring::MapBatch& b) { return network->forward(b.maps, b.valid); });
    set_training(true);
    const double auc = split_by_label(scores, config.dev_pairs).auc;
    report.dev_scores.push_back(auc);
    if (!report.best_dev_score || auc > *report.best_dev_score) {
      report.best_dev_score = auc;
      best_weights = serialize(*network);
      best_encoder.clear();
      for (const auto& p : encoder_params) best_encoder.push_back(p.detach().clone());
      epochs_without_improvement = 0;
    } else {
      ++epochs_without_improvement;
    }
  };

  using Clock = std::chrono::steady_clock;
  double training_seconds = 0;
  std::size_t examples = 0;
  set_training(true);
  // A run that had stopped early stays stopped when resumed.
  for (std::size_t step = first_step; step < total && !report.stopped_early; ++step) {
    const auto started = Clock::now();
    const auto& [epoch, batch] = plan[step];
    torch::manual_seed(config.seed + step + 1);
    const double factor = detail::schedule_factor(step, total, warmup);
    for (std::size_t g = 0; g < optimizer.param_groups().size(); ++g) {
      static_cast<torch::optim::AdamWOptions&>(optimizer.param_groups()[g].options()).lr(base_rates[g] * factor);
    }

    const auto input = step_maps.batch(triples, batch);
    const auto n = int64_t(batch.size());
    auto scores = network->forward(input.maps, input.valid).view({n, n + int64_t(k)});
    auto loss = map_verifier_loss(scores, config.temperature);
    optimizer.zero_grad();
    loss.backward();
    if (config.max_grad_norm > 0) torch::nn::utils::clip_grad_norm_(clipped, config.max_grad_norm);
    optimizer.step();
    const double loss_value = loss.item<double>();
    if (!std::isfinite(loss_value)) {
      throw Error("verifier training diverged: loss is " + std::to_string(loss_value) + " at step " +
                  std::to_string(step + 1) + " (try a lower learning rate)");
    }
    report.loss_curve.push_back(loss_value);
    examples += batch.size();
    training_seconds += std::chrono::duration<double>(Clock::now() - started).count();

    const bool epoch_end = step + 1 == total || plan[step + 1].first != epoch;
    bool stop = false;
    if (epoch_end && !config.dev_pairs.empty()) {
      evaluate();
      stop = config.patience > 0 && epochs_without_improvement >= config.patience;
    }
    TrainProgress p;
    p.step = step + 1;
    p.total_steps = total;
    p.epoch = epoch;
    p.loss = loss_value;
    p.learning_rate = config.learning_rate * factor;
    p.examples_per_second = double(examples) / std::max(training_seconds, 1e-9);
    p.eta_seconds = training_seconds / double(step + 1 - first_step) * double(total - step - 1);
    const bool checkpoint_due = config.checkpoint_every > 0 && (step + 1) % config.checkpoint_every == 0;
    if (checkpoint_due) save_checkpoint(step + 1);
    if (progress && !progress(p)) {
      if (config.checkpoint_every > 0 && !checkpoint_due) save_checkpoint(step + 1);
      throw Cancelled("verifier training cancelled after step " + std::to_string(step + 1) + " of " +
                      std::to_string(total));
    }
    report.steps = step + 1;
    if (stop) {
      report.stopped_early = true;
      if (config.checkpoint_every > 0) save_checkpoint(step + 1);
    }
  }
  if (!best_weights.empty()) restore(*network, best_weights);
  if (!best_encoder.empty()) detail::copy_tensors(best_encoder, encoder_params, "the best epoch's encoder");
  set_training(false);
  report.final_loss = report.loss_curve.back();
  report.examples_per_second = training_seconds > 0 ? double(examples) / training_seconds : 0.0;

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

}  // namespace counterpoint::training
