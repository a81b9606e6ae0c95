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
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/eval/metrics.h"
#include "counterpoint/scoring/token_maps.h"
#include "counterpoint/scoring/verifier_networks.h"
#include "counterpoint/training/losses.h"
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

}  // namespace

VerifierTrainReport train_verifier(const Encoder& encoder, const std::vector<Triple>& triples,
                                   const VerifierTrainConfig& config, const TrainProgressCallback& progress) {
  validate(triples, config);
  torch::set_num_threads(config.threads > 0 ? config.threads
                                            : std::max(1, int(std::thread::hardware_concurrency())));
  const std::size_t k = triples.front().negatives.size();
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> plan;  // (epoch, triple indices)
  for (std::size_t epoch = 0; epoch < config.epochs; ++epoch) {
    for (auto& batch : make_batches(triples, config.batch_size, config.seed, epoch)) plan.emplace_back(epoch, std::move(batch));
  }
  if (plan.empty()) {
    throw InvalidArgument("train_verifier: " + std::to_string(triples.size()) + " triples make no complete batch of " +
                          std::to_string(config.batch_size));
  }

  TokenTable tokens;
  for (const auto& t : triples) {
    tokens.add(t.anchor, TextRole::kQuery);
    tokens.add(t.positive, TextRole::kDocument);
    for (const auto& n : t.negatives) tokens.add(n, TextRole::kDocument);
  }
  for (const auto& p : config.dev_pairs) {
    tokens.add(p.query, TextRole::kQuery);
    tokens.add(p.candidate, TextRole::kDocument);
  }
  tokens.encode(encoder);
  std::vector<Matrix> dev_maps;
  for (const auto& p : config.dev_pairs) dev_maps.push_back(tokens.map(p.query, p.candidate));

  const int64_t map_size = config.shape.map_size;
  torch::manual_seed(config.seed);
  auto network = scoring::make_verifier_network(config.shape);
  torch::optim::AdamW optimizer(network->parameters(),
                                torch::optim::AdamWOptions(config.learning_rate).weight_decay(config.weight_decay));
  const std::size_t total = plan.size();
  const auto warmup = std::size_t(std::ceil(config.warmup_ratio * double(total)));

  VerifierTrainReport report;
  report.output_dir = config.output_dir;
  std::string best_weights;
  std::size_t epochs_without_improvement = 0;
  auto evaluate = [&] {
    network->eval();
    std::vector<const Matrix*> pointers;
    for (const Matrix& m : dev_maps) pointers.push_back(&m);
    const std::vector<float> scores = scoring::score_in_batches(
        pointers, map_size, "train_verifier", [&](const scoring::MapBatch& b) { return network->forward(b.maps, b.valid); });
    network->train(true);
    const double auc = split_by_label(scores, config.dev_pairs).auc;
    report.dev_scores.push_back(auc);
    if (!report.best_dev_score || auc > *report.best_dev_score) {
      report.best_dev_score = auc;
      best_weights = serialize(*network);
      epochs_without_improvement = 0;
    } else {
      ++epochs_without_improvement;
    }
  };

  using Clock = std::chrono::steady_clock;
  double training_seconds = 0;
  std::size_t examples = 0;
  network->train(true);
  for (std::size_t step = 0; step < total; ++step) {
    const auto started = Clock::now();
    const auto& [epoch, batch] = plan[step];
    torch::manual_seed(config.seed + step + 1);
    const double lr = config.learning_rate * detail::schedule_factor(step, total, warmup);
    for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);

    // Row i: anchor i against every positive of the batch, then against its own negatives.
    std::vector<Matrix> maps;
    maps.reserve(batch.size() * (batch.size() + k));
    for (std::size_t i : batch) {
      for (std::size_t j : batch) maps.push_back(tokens.map(triples[i].anchor, triples[j].positive));
      for (const auto& n : triples[i].negatives) maps.push_back(tokens.map(triples[i].anchor, n));
    }
    std::vector<const Matrix*> pointers;
    for (const Matrix& m : maps) pointers.push_back(&m);
    const auto input = scoring::make_map_batch(pointers, map_size, "train_verifier");
    const auto n = int64_t(batch.size());
    auto scores = network->forward(input.maps, input.valid).view({n, n + int64_t(k)});
    auto loss = map_verifier_loss(scores, config.temperature);
    optimizer.zero_grad();
    loss.backward();
    if (config.max_grad_norm > 0) torch::nn::utils::clip_grad_norm_(network->parameters(), config.max_grad_norm);
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
    if (epoch_end && !dev_maps.empty()) {
      evaluate();
      stop = config.patience > 0 && epochs_without_improvement >= config.patience;
    }
    TrainProgress p;
    p.step = step + 1;
    p.total_steps = total;
    p.epoch = epoch;
    p.loss = loss_value;
    p.learning_rate = lr;
    p.examples_per_second = double(examples) / std::max(training_seconds, 1e-9);
    p.eta_seconds = training_seconds / double(step + 1) * double(total - step - 1);
    if (progress && !progress(p)) {
      throw Cancelled("verifier training cancelled after step " + std::to_string(step + 1) + " of " +
                      std::to_string(total));
    }
    report.steps = step + 1;
    if (stop) {
      report.stopped_early = true;
      break;
    }
  }
  if (!best_weights.empty()) restore(*network, best_weights);
  network->eval();
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
                           {"seed", config.seed}, {"steps", report.steps}}},
      {"final_loss", report.final_loss},
      {"dev_near_miss_auc", report.dev_scores},
  };
  if (report.best_dev_score) training["best_dev_near_miss_auc"] = *report.best_dev_score;
  scoring::save_verifier_directory(config.output_dir, *network, config.shape, training.dump());
  return report;
}

NearMissReport evaluate_near_misses(const Encoder& encoder, const std::vector<LabeledPair>& pairs,
                                    const MapScorer& scorer) {
  TokenTable tokens;
  for (const auto& p : pairs) {
    tokens.add(p.query, TextRole::kQuery);
    tokens.add(p.candidate, TextRole::kDocument);
  }
  require_both_labels(pairs, "evaluate_near_misses");
  tokens.encode(encoder);
  std::vector<Matrix> maps;
  for (const auto& p : pairs) maps.push_back(tokens.map(p.query, p.candidate));
  const std::vector<float> scores = scorer(maps);
  if (scores.size() != maps.size()) {
    throw InvalidArgument("evaluate_near_misses: the scorer returned " + std::to_string(scores.size()) +
                          " scores for " + std::to_string(maps.size()) + " maps");
  }
  return split_by_label(scores, pairs);
}

}  // namespace counterpoint::training
