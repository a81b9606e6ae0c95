#include "counterpoint/training/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/threads.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/torch_model.h"
#include "fine_tuning.h"
#include "training_checks.h"

namespace counterpoint::training {


LossKind parse_loss_kind(const std::string& name) {
  if (name == "sparsecl") return LossKind::kSparseCL;
  if (name == "contrastive") return LossKind::kContrastive;
  throw InvalidArgument("unknown loss '" + name + "' (expected sparsecl or contrastive)");
}

std::string to_string(LossKind kind) {
  return kind == LossKind::kSparseCL ? "sparsecl" : "contrastive";
}

TrainedWeights parse_trained_weights(const std::string& name) {
  if (name == "network") return TrainedWeights::kNetwork;
  if (name == "head") return TrainedWeights::kHead;
  throw InvalidArgument("unknown trained weights '" + name + "' (expected network or head)");
}

std::string to_string(TrainedWeights weights) { return weights == TrainedWeights::kHead ? "head" : "network"; }

std::string format_progress(const TrainProgress& p) {
  const auto eta = static_cast<long long>(std::llround(std::max(0.0, p.eta_seconds)));
  char line[160];
  std::snprintf(line, sizeof line, "step %zu/%zu epoch %zu loss %.4f lr %.2g %.1f ex/s ETA %lld:%02lld:%02lld",
                p.step, p.total_steps, p.epoch + 1, p.loss, p.learning_rate, p.examples_per_second,
                eta / 3600, (eta / 60) % 60, eta % 60);
  return line;
}

std::vector<std::vector<std::size_t>> make_batches(const std::vector<Triple>& triples,
                                                   std::size_t batch_size, std::uint64_t seed,
                                                   std::size_t epoch) {
  if (batch_size < 1) throw InvalidArgument("batch_size must be >= 1");
  std::set<std::string> groups;
  std::size_t ungrouped = 0;
  for (const auto& t : triples) t.group.empty() ? void(++ungrouped) : void(groups.insert(t.group));
  if (groups.size() + ungrouped < batch_size) {
    throw InvalidArgument("batch_size " + std::to_string(batch_size) + " exceeds the " +
                          std::to_string(groups.size() + ungrouped) +
                          " distinct groups of the triples: a batch may hold each group once");
  }
  std::vector<std::size_t> remaining(triples.size());
  std::iota(remaining.begin(), remaining.end(), 0);
  std::mt19937_64 rng(seed * 1000003ULL + epoch);
  std::shuffle(remaining.begin(), remaining.end(), rng);

  std::vector<std::vector<std::size_t>> batches;
  while (!remaining.empty()) {
    std::vector<std::size_t> batch, leftover;
    std::set<std::string> batch_groups, batch_texts;
    for (std::size_t index : remaining) {
      const Triple& t = triples[index];
      const bool fits = batch.size() < batch_size && (t.group.empty() || !batch_groups.count(t.group)) &&
                        !batch_texts.count(t.anchor) && !batch_texts.count(t.positive) &&
                        t.anchor != t.positive;
      if (!fits) {
        leftover.push_back(index);
        continue;
      }
      batch.push_back(index);
      if (!t.group.empty()) batch_groups.insert(t.group);
      batch_texts.insert(t.anchor);
      batch_texts.insert(t.positive);
    }
    if (batch.size() < batch_size) break;
    batches.push_back(std::move(batch));
    remaining = std::move(leftover);
  }
  return batches;
}

namespace {

void validate(const std::vector<Triple>& triples, const TrainConfig& c) {
  detail::require_uniform_triples(triples, "train");
  detail::require_valid({c.epochs, c.temperature, c.learning_rate, c.weight_decay, c.warmup_ratio, c.max_grad_norm,
                         c.threads},
                        c.output_dir, "TrainConfig");
}

using detail::schedule_factor;

void copy_state(torch::jit::Module& from, torch::jit::Module& to, const std::string& origin) {
  torch::NoGradGuard no_grad;
  auto source = from.named_parameters();
  auto target = to.named_parameters();
  std::map<std::string, torch::Tensor> by_name;
  for (const auto& p : source) by_name[p.name] = p.value;
  for (const auto& p : target) {
    auto it = by_name.find(p.name);
    if (it == by_name.end() || !it->second.sizes().equals(p.value.sizes())) {
      throw CorruptFile(origin + ": parameter '" + p.name + "' is missing or has another shape");
    }
    p.value.copy_(it->second);
  }
  std::map<std::string, torch::Tensor> buffers;
  for (const auto& b : from.named_buffers()) buffers[b.name] = b.value;
  for (const auto& b : to.named_buffers()) {
    auto it = buffers.find(b.name);
    if (it != buffers.end() && it->second.sizes().equals(b.value.sizes())) b.value.copy_(it->second);
  }
}

nlohmann::json config_fingerprint(const std::vector<Triple>& triples, const TrainConfig& c,
                                  std::size_t total_steps) {
  return {{"triples", triples.size()}, {"loss", to_string(c.loss)}, {"sparsity", to_string(c.sparsity)},
          {"trained_weights", to_string(c.trained_weights)},
          {"temperature", c.temperature}, {"hard_negative_weight", c.hard_negative_weight},
          {"batch_size", c.batch_size}, {"epochs", c.epochs}, {"learning_rate", c.learning_rate},
          {"weight_decay", c.weight_decay}, {"warmup_ratio", c.warmup_ratio}, {"max_grad_norm", c.max_grad_norm},
          {"query_prefix", c.query_prefix.value_or("<base model's>")}, {"seed", c.seed},
          {"total_steps", total_steps}};
}

struct RunState {
  std::size_t step = 0;
  std::vector<double> loss_curve;
  std::vector<double> dev_scores;
  std::optional<double> best_dev_score;
  std::size_t evaluations_without_improvement = 0;
  bool stopped_early = false;
  std::vector<torch::Tensor> best_parameters;  // empty until a dev evaluation ran
};

// The network goes into the checkpoint only when it learns; the head whenever there is one.
void save_checkpoint(const TrainConfig& config, TorchTextModel& model, torch::optim::AdamW& optimizer,
                     const RunState& state, const nlohmann::json& fingerprint) {
  nlohmann::json j = {{"step", state.step}, {"loss_curve", state.loss_curve}, {"dev_scores", state.dev_scores},
                      {"evaluations_without_improvement", state.evaluations_without_improvement},
                      {"stopped_early", state.stopped_early}};
  if (state.best_dev_score) j["best_dev_score"] = *state.best_dev_score;
  detail::write_checkpoint(config.output_dir, j, fingerprint, [&](const std::string& dir) {
    if (config.trained_weights == TrainedWeights::kNetwork) model.module().save(join_path(dir, "model.pt"));
    if (model.head().defined()) torch::save(model.head().detach(), join_path(dir, "head.pt"));
    detail::save_optimizer(optimizer, join_path(dir, "optimizer.pt"));
    if (!state.best_parameters.empty()) torch::save(state.best_parameters, join_path(dir, "best.pt"));
  });
}

// Restores module, optimizer and run state; false when there is no checkpoint.
bool load_checkpoint(const TrainConfig& config, TorchTextModel& model, torch::optim::AdamW& optimizer,
                     RunState& state, const nlohmann::json& fingerprint) {
  return detail::read_checkpoint(
      config.output_dir, fingerprint,
      [&](const nlohmann::json& j) {
        state.step = j.at("step").get<std::size_t>();
        state.loss_curve = j.at("loss_curve").get<std::vector<double>>();
        state.dev_scores = j.at("dev_scores").get<std::vector<double>>();
        state.evaluations_without_improvement = j.at("evaluations_without_improvement").get<std::size_t>();
        if (j.contains("best_dev_score")) state.best_dev_score = j["best_dev_score"].get<double>();
        state.stopped_early = j.value("stopped_early", false);
      },
      [&](const std::string& dir) {
        if (config.trained_weights == TrainedWeights::kNetwork) {
          auto saved = torch::jit::load(join_path(dir, "model.pt"), torch::kCPU);
          copy_state(saved, model.module(), join_path(dir, "model.pt"));
        }
        if (model.head().defined()) {
          torch::Tensor saved;
          torch::load(saved, join_path(dir, "head.pt"));
          detail::copy_tensors({saved}, {model.head()}, join_path(dir, "head.pt"));
        }
        detail::load_optimizer(optimizer, join_path(dir, "optimizer.pt"));
        if (path_exists(join_path(dir, "best.pt"))) torch::load(state.best_parameters, join_path(dir, "best.pt"));
      });
}

// Pooled features of every distinct text in one role, computed once with the network frozen
// (head-only training).
class FrozenFeatures {
 public:
  FrozenFeatures(TorchTextModel& model, std::vector<std::string> texts, const std::string& prefix) {
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    // Similar lengths share a batch, so padding costs little.
    std::stable_sort(texts.begin(), texts.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> parts;
    constexpr std::size_t kBatch = 32;
    for (std::size_t start = 0; start < texts.size(); start += kBatch) {
      const std::vector<std::string> batch(texts.begin() + long(start),
                                           texts.begin() + long(std::min(texts.size(), start + kBatch)));
      parts.push_back(model.pooled_features(model.tokenize(batch, prefix)).to(torch::kFloat32));
    }
    features_ = torch::cat(parts);
    for (std::size_t i = 0; i < texts.size(); ++i) row_[texts[i]] = int64_t(i);
  }
  torch::Tensor rows(const std::vector<std::string>& texts) const {
    std::vector<int64_t> index;
    for (const auto& t : texts) index.push_back(row_.at(t));
    return features_.index_select(0, torch::tensor(index));
  }

 private:
  torch::Tensor features_;
  std::unordered_map<std::string, int64_t> row_;
};

std::vector<torch::Tensor> snapshot(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> copy;
  for (const auto& p : params) copy.push_back(p.detach().clone());
  return copy;
}

void write_model_directory(Encoder& encoder, const std::vector<Triple>& triples, const TrainConfig& config,
                           const std::string& query_prefix, const TrainReport& report) {
  const ModelManifest& base = encoder.manifest();
  auto base_sha = base.files.find(base.model_file);
  nlohmann::json training = {
      {"base", {{"name", base.name}, {"model_sha256", base_sha != base.files.end() ? base_sha->second : ""}}},
      {"data", config.data_description},
      {"triples", triples.size()},
      {"loss", {{"kind", to_string(config.loss)}, {"sparsity", to_string(config.sparsity)},
                {"temperature", config.temperature}, {"hard_negative_weight", config.hard_negative_weight}}},
      {"hyperparameters", {{"trained_weights", to_string(config.trained_weights)},
                           {"epochs", config.epochs}, {"batch_size", config.batch_size},
                           {"learning_rate", config.learning_rate}, {"weight_decay", config.weight_decay},
                           {"warmup_ratio", config.warmup_ratio}, {"max_grad_norm", config.max_grad_norm},
                           {"seed", config.seed}, {"negatives_per_triple", triples.front().negatives.size()},
                           {"query_prefix", query_prefix}, {"steps", report.steps}}},
      {"final_loss", report.final_loss},
      {"dev_scores", report.dev_scores},
  };
  if (report.best_dev_score) training["best_dev_score"] = *report.best_dev_score;
  detail::write_model_directory(encoder, config.output_dir,
                                config.model_name.empty() ? base.name + "-" + to_string(config.loss) : config.model_name,
                                query_prefix, training);
}

}  // namespace

TrainReport train(Encoder& encoder, const std::vector<Triple>& triples, const TrainConfig& config,
                  const TrainProgressCallback& progress) {
  validate(triples, config);
  torch::set_num_threads(resolve_threads(config.threads, "threads"));
  TorchTextModel& model = encoder.model();
  torch::jit::Module& module = model.module();
  const ModelManifest& manifest = encoder.manifest();
  const std::string query_prefix = config.query_prefix.value_or(manifest.query_prefix);
  const std::size_t k = triples.front().negatives.size();

  // Every epoch's batches, in order; the step index alone fixes data and dropout randomness, so
  // a resumed run continues exactly where the interrupted one stopped.
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> plan;
  for (std::size_t epoch = 0; epoch < config.epochs; ++epoch) {
    for (auto& batch : make_batches(triples, config.batch_size, config.seed, epoch)) {
      plan.emplace_back(epoch, std::move(batch));
    }
  }
  if (plan.empty()) {
    throw InvalidArgument("train: " + std::to_string(triples.size()) + " triples make no complete batch of " +
                          std::to_string(config.batch_size));
  }
  const std::size_t total = config.max_steps > 0 ? std::min(config.max_steps, plan.size()) : plan.size();
  const auto warmup = std::size_t(std::ceil(config.warmup_ratio * double(total)));
  const auto fingerprint = config_fingerprint(triples, config, total);

  torch::manual_seed(config.seed);
  const bool head_only = config.trained_weights == TrainedWeights::kHead;
  if (head_only && !model.head().defined()) {
    model.set_head(torch::eye(int64_t(manifest.embedding_dim), int64_t(model.pooled_width())));
  }
  std::vector<torch::Tensor> params;
  if (!head_only) params = detail::trainable_parameters(module, manifest.name);
  if (model.head().defined()) {
    torch::Tensor head = model.head();
    head.requires_grad_(true);
    params.push_back(head);
  }
  torch::optim::AdamW optimizer(params, torch::optim::AdamWOptions(config.learning_rate)
                                            .weight_decay(config.weight_decay));
  RunState state;
  TrainReport report;
  report.output_dir = config.output_dir;
  if (config.resume && load_checkpoint(config, model, optimizer, state, fingerprint)) {
    report.resumed_from = state.step;
  }
  std::optional<FrozenFeatures> anchor_features, document_features;
  if (head_only) {
    module.eval();
    std::vector<std::string> anchors, documents;
    for (const auto& t : triples) {
      anchors.push_back(t.anchor);
      documents.push_back(t.positive);
      documents.insert(documents.end(), t.negatives.begin(), t.negatives.end());
    }
    anchor_features.emplace(model, std::move(anchors), query_prefix);
    document_features.emplace(model, std::move(documents), manifest.document_prefix);
  }
  const auto set_training = [&](bool on) {
    if (!head_only) module.train(on);
  };

  auto evaluate = [&]() {
    set_training(false);
    const double score = config.dev_evaluation(encoder);
    set_training(true);
    state.dev_scores.push_back(score);
    if (!state.best_dev_score || score > *state.best_dev_score) {
      state.best_dev_score = score;
      state.best_parameters = snapshot(params);
      state.evaluations_without_improvement = 0;
    } else {
      ++state.evaluations_without_improvement;
    }
  };

  set_training(true);
  using Clock = std::chrono::steady_clock;
  double training_seconds = 0;
  std::size_t examples = 0;
  const std::size_t first_step = state.step;
  // A run that had stopped early stays stopped when resumed.
  while (state.step < total && !state.stopped_early) {
    const auto started = Clock::now();
    const auto& [epoch, batch] = plan[state.step];
    torch::manual_seed(config.seed + state.step);
    const double lr = config.learning_rate * schedule_factor(state.step, total, warmup);
    for (auto& group : optimizer.param_groups()) {
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    }
    std::vector<std::string> anchors, documents;
    for (std::size_t i : batch) anchors.push_back(triples[i].anchor);
    for (std::size_t i : batch) documents.push_back(triples[i].positive);
    for (std::size_t i : batch)
      for (const auto& n : triples[i].negatives) documents.push_back(n);
    auto a = head_only ? model.apply_head(anchor_features->rows(anchors))
                       : model.pooled(model.tokenize(anchors, query_prefix), true);
    auto d = head_only ? model.apply_head(document_features->rows(documents))
                       : model.pooled(model.tokenize(documents, manifest.document_prefix), true);
    const auto n = int64_t(batch.size());
    auto positive = d.narrow(0, 0, n);
    auto negative = d.narrow(0, n, n * int64_t(k));
    auto loss = config.loss == LossKind::kSparseCL
                    ? sparsecl_loss(a, positive, negative, config.sparsity, config.temperature,
                                    config.hard_negative_weight)
                    : contrastive_loss(a, positive, negative, config.temperature, config.hard_negative_weight);
    optimizer.zero_grad();
    loss.backward();
    if (config.max_grad_norm > 0) torch::nn::utils::clip_grad_norm_(params, config.max_grad_norm);
    optimizer.step();
    const double loss_value = loss.item<double>();
    if (!std::isfinite(loss_value)) {
      throw Error("training diverged: loss is " + std::to_string(loss_value) + " at step " +
                  std::to_string(state.step + 1) + " (try a lower learning rate or a higher temperature)");
    }
    state.loss_curve.push_back(loss_value);
    ++state.step;
    examples += batch.size();
    training_seconds += std::chrono::duration<double>(Clock::now() - started).count();

    const bool epoch_end = state.step == total || plan[state.step].first != epoch;
    bool stop = false;
    if (config.dev_evaluation && (config.eval_every > 0 ? (state.step % config.eval_every == 0 || state.step == total)
                                                        : epoch_end)) {
      evaluate();
      stop = config.patience > 0 && state.evaluations_without_improvement >= config.patience;
    }
    const bool checkpoint_due = config.checkpoint_every > 0 && state.step % config.checkpoint_every == 0;
    if (checkpoint_due) save_checkpoint(config, model, optimizer, state, fingerprint);

    TrainProgress p;
    p.step = state.step;
    p.total_steps = total;
    p.epoch = epoch;
    p.loss = loss_value;
    p.learning_rate = lr;
    p.examples_per_second = double(examples) / std::max(training_seconds, 1e-9);
    p.eta_seconds = training_seconds / double(state.step - first_step) * double(total - state.step);
    if (progress && !progress(p)) {
      if (config.checkpoint_every > 0 && !checkpoint_due) {
        save_checkpoint(config, model, optimizer, state, fingerprint);
      }
      throw Cancelled("training cancelled after step " + std::to_string(state.step) + " of " +
                      std::to_string(total));
    }
    if (stop) {
      state.stopped_early = true;
      if (config.checkpoint_every > 0) save_checkpoint(config, model, optimizer, state, fingerprint);
    }
  }

  if (!state.best_parameters.empty()) detail::copy_tensors(state.best_parameters, params, "the best dev weights");
  report.steps = state.step;
  report.stopped_early = state.stopped_early;
  report.loss_curve = state.loss_curve;
  report.final_loss = state.loss_curve.empty() ? 0.0 : state.loss_curve.back();
  report.examples_per_second = training_seconds > 0 ? double(examples) / training_seconds : 0.0;
  report.dev_scores = state.dev_scores;
  report.best_dev_score = state.best_dev_score;
  write_model_directory(encoder, triples, config, query_prefix, report);
  return report;
}

TrainReport train(const std::string& base_model_dir, const std::vector<Triple>& triples,
                  const TrainConfig& config, const TrainProgressCallback& progress) {
  EncoderConfig encoder_config;
  encoder_config.threads = config.threads;
  auto encoder = Encoder::load(base_model_dir, encoder_config);
  return train(*encoder, triples, config, progress);
}

}  // namespace counterpoint::training
