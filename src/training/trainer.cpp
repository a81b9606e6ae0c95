#include "counterpoint/training/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/threads.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/feature_cache.h"
#include "counterpoint/encoder/torch_model.h"
#include "counterpoint/encoder/torchscript_files.h"
#include "counterpoint/eval/retrieval_task.h"
#include "fine_tuning.h"
#include "run_loop.h"

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

namespace {

// Whole-network training runs the network over each batch's texts in length-sorted chunks of this
// many, each padded to its own longest (detail::pooled_in_length_chunks): the same rows and loss
// with less padding. Chosen by measurement on ArguAna (benchmarks/README.md, "Training throughput").
constexpr std::size_t kLengthChunk = 16;

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

// What a resumed run must share with the interrupted one.
nlohmann::json config_fingerprint(const std::vector<Triple>& triples, const TrainConfig& c) {
  nlohmann::json fingerprint = {
      {"triples", triples.size()}, {"loss", to_string(c.loss)}, {"sparsity", to_string(c.sparsity)},
      {"trained_weights", to_string(c.trained_weights)},
      {"temperature", c.temperature}, {"hard_negative_weight", c.hard_negative_weight},
      {"batch_size", c.batch_size}, {"epochs", c.epochs}, {"learning_rate", c.learning_rate},
      {"weight_decay", c.weight_decay}, {"warmup_ratio", c.warmup_ratio}, {"max_grad_norm", c.max_grad_norm},
      {"query_prefix", c.query_prefix.value_or("<base model's>")}, {"seed", c.seed}};
  // Only when set, so that checkpoints of whole-network runs written before the option still resume.
  if (c.frozen_layers > 0) fingerprint["frozen_layers"] = c.frozen_layers;
  if (c.head_kind != HeadKind::kLinear) fingerprint["head"] = {to_string(c.head_kind), c.head_hidden};
  return fingerprint;
}

// Pooled features of every distinct text in one role, computed once with the network frozen
// (head-only training), or read from a FeatureCache that holds them.
class FrozenFeatures {
 public:
  FrozenFeatures(const Encoder& encoder, std::vector<std::string> texts, const std::string& prefix,
                 FeatureCache* cache) {
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    if (cache) {
      EncodeOptions options;
      options.prefix_override = &prefix;
      Matrix rows = cache->features(encoder, texts, options);
      features_ = torch::from_blob(rows.data(), {int64_t(rows.rows()), int64_t(rows.cols())}, torch::kFloat32).clone();
    } else {
      // Similar lengths share a batch, so padding costs little.
      std::stable_sort(texts.begin(), texts.end(),
                       [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
      TorchTextModel& model = encoder.model();
      torch::NoGradGuard no_grad;
      std::vector<torch::Tensor> parts;
      constexpr std::size_t kBatch = 32;
      for (std::size_t start = 0; start < texts.size(); start += kBatch) {
        const std::vector<std::string> batch(texts.begin() + long(start),
                                             texts.begin() + long(std::min(texts.size(), start + kBatch)));
        parts.push_back(model.pooled_features(model.tokenize(batch, prefix)).to(torch::kFloat32));
      }
      features_ = torch::cat(parts);
    }
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

// The layer a parameter named layers.<i>.<rest> belongs to; nullopt for any other name.
std::optional<std::size_t> layer_of(const std::string& name) {
  static const std::string kLayers = "layers.";
  if (name.compare(0, kLayers.size(), kLayers) != 0) return std::nullopt;
  std::size_t end = kLayers.size(), layer = 0;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) {
    layer = layer * 10 + std::size_t(name[end] - '0');
    ++end;
  }
  if (end == kLayers.size() || end >= name.size() || name[end] != '.') return std::nullopt;
  return layer;
}

// Stops gradients for the token embeddings and layers 0 .. frozen - 1 of a module (partial
// fine-tuning) for its lifetime, then lets them flow again: requires_grad is saved with a
// TorchScript module, and a model that came out frozen would silently train less when fine-tuned
// again. InvalidArgument naming the model when it has no numbered layers, or when `frozen` leaves
// none of them to train.
class FrozenBottomLayers {
 public:
  FrozenBottomLayers(torch::jit::Module& module, std::size_t frozen, const std::string& model_name) {
    if (frozen == 0) return;
    std::size_t layers = 0;
    for (const auto& p : module.named_parameters()) {
      if (auto layer = layer_of(p.name)) layers = std::max(layers, *layer + 1);
    }
    if (layers == 0) {
      throw InvalidArgument("frozen_layers " + std::to_string(frozen) + ": model " + model_name +
                            " has no numbered transformer layers (parameters layers.<i>.*) to freeze");
    }
    if (frozen >= layers) {
      throw InvalidArgument("frozen_layers " + std::to_string(frozen) + " leaves none of model " + model_name +
                            "'s " + std::to_string(layers) + " layers to train (at most " +
                            std::to_string(layers - 1) + "; to freeze the whole network, train a head alone)");
    }
    for (const auto& p : module.named_parameters()) {
      const auto layer = layer_of(p.name);
      // Embeddings are what lies outside the numbered layers and says so in its name.
      const bool embedding = !layer && p.name.find("embedding") != std::string::npos;
      if ((embedding || (layer && *layer < frozen)) && p.value.requires_grad()) {
        p.value.requires_grad_(false);
        frozen_.push_back(p.value);
      }
    }
  }
  ~FrozenBottomLayers() { release(); }
  // Before the model is written, which must not record the freezing.
  void release() {
    for (auto& p : frozen_) p.requires_grad_(true);
    frozen_.clear();
  }
  FrozenBottomLayers(const FrozenBottomLayers&) = delete;
  FrozenBottomLayers& operator=(const FrozenBottomLayers&) = delete;

 private:
  std::vector<torch::Tensor> frozen_;
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
                           {"head", encoder.model().head().empty() ? "none" : to_string(encoder.model().head_kind())},
                           {"frozen_layers", config.frozen_layers},
                           {"epochs", config.epochs}, {"batch_size", config.batch_size},
                           {"learning_rate", config.learning_rate}, {"weight_decay", config.weight_decay},
                           {"warmup_ratio", config.warmup_ratio}, {"max_grad_norm", config.max_grad_norm},
                           {"seed", config.seed}, {"negatives_per_triple", triples.front().negatives.size()},
                           {"query_prefix", query_prefix}, {"steps", report.steps}}},
      {"final_loss", report.final_loss},
      {"dev_scores", report.dev_scores},
  };
  if (encoder.model().head_kind() == HeadKind::kMlp) {
    training["hyperparameters"]["head_hidden"] = encoder.model().head().at(1).size(0);  // W1 [hidden x pooled]
  }
  if (report.best_dev_score) training["best_dev_score"] = *report.best_dev_score;
  detail::write_model_directory(encoder, config.output_dir,
                                config.model_name.empty() ? base.name + "-" + to_string(config.loss) : config.model_name,
                                query_prefix, training,
                                config.trained_weights == TrainedWeights::kHead ? detail::NetworkWeights::kUnchanged
                                                                                : detail::NetworkWeights::kTrained);
}

// InvalidArgument when the run would write its model over the base model's directory (or into
// a folder holding it), by the one output rule; then when the output folder holds anything but
// what a training writes (checked second, so that the base model is named when it is the output).
void require_output_is_not_base(const std::string& base_dir, const TrainConfig& config) {
  require_safe_output(config.output_dir, "output_dir", {{"base model", base_dir}}, OutputKind::kFolder);
  detail::require_training_output_folder(config.output_dir, "TrainConfig", detail::TrainedKind::kEncoder);
}

// The triples of every dev file. A file holding none is refused, naming it: alpha would be tuned on
// the others' triples alone, or (the only file) not at all, and the model written without one.
std::vector<Triple> load_dev_triples(const std::vector<std::string>& files) {
  std::vector<Triple> dev;
  for (const auto& file : files) {
    std::vector<Triple> part = load_tsv_triples(file);
    if (part.empty()) {
      throw InvalidArgument("TrainConfig.dev_triples file " + file +
                            " holds no triples (lines anchor<TAB>positive<TAB>negative); give held-out triples to "
                            "tune alpha on, or no dev triples");
    }
    dev.insert(dev.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return dev;
}

// Tunes alpha for cos(E) + alpha * sparsity(Es) on the dev triples, with the model just written
// to config.output_dir as Es, and records it in that model's manifest.
void tune_and_record_alpha(const std::vector<Triple>& dev, const TrainConfig& config, EncoderTrainReport& report) {
  EncoderConfig encoder_config;
  encoder_config.threads = config.threads;
  const auto dense = Encoder::load(config.dense_model, encoder_config);
  const auto sparse = Encoder::load(config.output_dir, encoder_config);
  const eval::AlphaSearch search;
  report.alpha_tuning =
      eval::tune_alpha_on_task(dev_task(dev), dense, sparse, config.sparsity, search, config.sparsity_scales);
  report.dense_model = dense->manifest().name;
  const std::string tuned = config.sparsity_scales.size() > 1 ? "alpha and the sparsity scale tau" : "alpha";
  if (std::string warning = few_dev_queries_warning(tuned, report.alpha_tuning->queries, "alpha"); !warning.empty()) {
    report.notes.push_back(warning);
  }
  nlohmann::json dev_record = {{"triples", config.dev_triples}, {"dense_model", report.dense_model}};
  if (!config.dev_triples_in_memory.empty()) dev_record["triples_in_memory"] = config.dev_triples_in_memory.size();
  eval::record_tuned_alpha(config.output_dir, *report.alpha_tuning, search, dev_record);
}

}  // namespace

std::string few_dev_queries_warning(const std::string& what, std::size_t queries, const std::string& search_setting) {
  if (queries >= kFewDevQueries) return {};
  return what + " tuned on " + std::to_string(queries) + " dev quer" + (queries == 1 ? "y" : "ies") + " (fewer than " +
         std::to_string(kFewDevQueries) + "): it may not carry over; give more dev triples or pass " +
         search_setting + " at search time";
}

void validate(const TrainConfig& c) {
  detail::require_valid(c, c, c.temperature, "TrainConfig");
  if (!std::isfinite(c.hard_negative_weight)) throw InvalidArgument("TrainConfig.hard_negative_weight must be finite");
  if (c.sparsity_scales.empty()) throw InvalidArgument("TrainConfig.sparsity_scales: give at least one (0 = no gate)");
  for (float scale : c.sparsity_scales) retrieval::choose_sparsity_scale(scale, nullptr);
  if (c.frozen_layers > 0 && c.trained_weights == TrainedWeights::kHead) {
    throw InvalidArgument("TrainConfig.frozen_layers applies to network training: head-only training freezes the "
                          "whole network already");
  }
  if (c.head_kind != HeadKind::kLinear && c.trained_weights != TrainedWeights::kHead) {
    throw InvalidArgument("TrainConfig.head_kind '" + to_string(c.head_kind) +
                          "' is the head a head-only training installs: train with trained_weights head");
  }
  if (c.head_kind == HeadKind::kMlp && (c.head_hidden < 1 || c.head_hidden > 65536)) {
    throw InvalidArgument("TrainConfig.head_hidden must be in [1, 65536], not " + std::to_string(c.head_hidden));
  }
  if (c.dev_triples.empty() && c.dev_triples_in_memory.empty()) return;
  for (const auto& file : c.dev_triples) require_regular_file(file);
  resolve_model(c.dense_model);
}

EncoderTrainReport train(Encoder& encoder, const std::vector<Triple>& triples, const TrainConfig& given,
                         const TrainProgressCallback& progress) {
  validate(given);
  detail::require_uniform_triples(triples, "train");
  TrainConfig config = given;
  std::vector<std::string> notes;
  if (std::string note = detail::fit_batch_size(config, TrainConfig{}.batch_size, triples, "TrainConfig");
      !note.empty()) {
    notes.push_back(note);
  }
  require_output_is_not_base(encoder.directory(), config);
  // Read now, so that a malformed or empty dev file stops the run before training rather than after.
  std::vector<Triple> dev = load_dev_triples(config.dev_triples);
  dev.insert(dev.end(), config.dev_triples_in_memory.begin(), config.dev_triples_in_memory.end());
  const detail::BatchPlan plan = detail::plan_batches(triples, config, config, "train");
  torch::set_num_threads(resolve_threads(config.threads, "threads"));
  TorchTextModel& model = encoder.model();
  torch::jit::Module& module = model.module();
  const ModelManifest& manifest = encoder.manifest();
  const std::string query_prefix = config.query_prefix.value_or(manifest.query_prefix);
  const std::size_t k = triples.front().negatives.size();

  torch::manual_seed(config.seed);
  const bool head_only = config.trained_weights == TrainedWeights::kHead;
  if (head_only && model.head().empty()) {
    model.set_head(config.head_kind, starting_head(config.head_kind, int64_t(manifest.embedding_dim),
                                              int64_t(model.pooled_width()), int64_t(config.head_hidden)));
  } else if (head_only && model.head_kind() != config.head_kind) {
    throw InvalidArgument("model " + manifest.name + " has a " + to_string(model.head_kind()) +
                          " head; a head-only training goes on training it, so ask for head " +
                          to_string(model.head_kind()) + " (not " + to_string(config.head_kind) + ")");
  }
  std::vector<torch::Tensor> params;
  FrozenBottomLayers frozen(module, head_only ? 0 : config.frozen_layers, manifest.name);
  if (!head_only) params = detail::trainable_parameters(module, manifest.name);
  for (torch::Tensor head : model.head()) {
    head.requires_grad_(true);
    params.push_back(head);
  }
  torch::optim::AdamW optimizer(params, torch::optim::AdamWOptions(config.learning_rate)
                                            .weight_decay(config.weight_decay));
  std::optional<FrozenFeatures> anchor_features, document_features;
  if (head_only) {
    module.eval();
    std::vector<std::string> anchors, documents;
    for (const auto& t : triples) {
      anchors.push_back(t.anchor);
      documents.push_back(t.positive);
      documents.insert(documents.end(), t.negatives.begin(), t.negatives.end());
    }
    std::optional<FeatureCache> cache;
    if (!config.feature_cache.empty()) cache.emplace(config.feature_cache);
    anchor_features.emplace(encoder, std::move(anchors), query_prefix, cache ? &*cache : nullptr);
    document_features.emplace(encoder, std::move(documents), manifest.document_prefix, cache ? &*cache : nullptr);
  }

  std::vector<torch::Tensor> best_parameters;  // empty until a dev evaluation ran
  detail::LoopTask task;
  task.name = "training";
  task.diverged_hint = "(try a lower learning rate or a higher temperature)";
  task.optimizer = &optimizer;
  task.base_rates = {config.learning_rate};
  task.clipped = params;
  task.fingerprint = config_fingerprint(triples, config);
  task.batch_loss = [&](const std::vector<std::size_t>& batch) {
    std::vector<std::string> anchors, documents;  // documents: the positives, then each anchor's negatives
    for (std::size_t i : batch) anchors.push_back(triples[i].anchor);
    for (std::size_t i : batch) documents.push_back(triples[i].positive);
    for (std::size_t i : batch)
      for (const auto& n : triples[i].negatives) documents.push_back(n);
    auto a = head_only ? model.apply_head(anchor_features->rows(anchors))
                       : detail::pooled_in_length_chunks(model, model.tokenize(anchors, query_prefix),
                                                         kLengthChunk);
    auto d = head_only ? model.apply_head(document_features->rows(documents))
                       : detail::pooled_in_length_chunks(model, model.tokenize(documents, manifest.document_prefix),
                                                         kLengthChunk);
    const auto n = int64_t(batch.size());
    auto positive = d.narrow(0, 0, n);
    auto negative = d.narrow(0, n, n * int64_t(k));
    return config.loss == LossKind::kSparseCL
               ? sparsecl_loss(a, positive, negative, config.sparsity, config.temperature,
                               config.hard_negative_weight)
               : contrastive_loss(a, positive, negative, config.temperature, config.hard_negative_weight);
  };
  task.set_training = [&](bool on) {
    if (!head_only) module.train(on);
  };
  if (config.dev_evaluation) task.evaluate = [&] { return config.dev_evaluation(encoder); };
  task.keep_best = [&] { best_parameters = snapshot(params); };
  task.restore_best = [&] {
    if (!best_parameters.empty()) detail::copy_tensors(best_parameters, params, "the best dev weights");
  };
  // The network goes into the checkpoint only when it learns; the head whenever there is one.
  task.save_files = [&](const std::string& dir) {
    if (!head_only) module.save(join_path(dir, "model.pt"), torchscript_writer_record());
    if (!model.head().empty()) save_head(model.head_kind(), model.head(), join_path(dir, "head.pt"));
    detail::save_optimizer(optimizer, join_path(dir, "optimizer.pt"));
    if (!best_parameters.empty()) torch::save(best_parameters, join_path(dir, "best.pt"));
  };
  task.load_files = [&](const std::string& dir) {
    if (!head_only) {
      auto saved = torch::jit::load(join_path(dir, "model.pt"), torch::kCPU);
      copy_state(saved, module, join_path(dir, "model.pt"));
    }
    if (!model.head().empty()) {
      detail::copy_tensors(load_head(join_path(dir, "head.pt")), model.head(), join_path(dir, "head.pt"));
    }
    detail::load_optimizer(optimizer, join_path(dir, "optimizer.pt"));
    if (path_exists(join_path(dir, "best.pt"))) torch::load(best_parameters, join_path(dir, "best.pt"));
  };

  EncoderTrainReport report;
  static_cast<TrainReport&>(report) = detail::run_loop(plan, config, config, task, progress);
  report.triples = triples.size();
  report.notes = notes;
  frozen.release();
  write_model_directory(encoder, triples, config, query_prefix, report);
  if (!dev.empty()) tune_and_record_alpha(dev, config, report);
  return report;
}

namespace {

EncoderTrainReport train_base(const std::string& base_dir, const std::vector<Triple>& triples,
                              const TrainConfig& config, const TrainProgressCallback& progress) {
  EncoderConfig encoder_config;
  encoder_config.threads = config.threads;
  auto encoder = Encoder::load(base_dir, encoder_config);
  return train(*encoder, triples, config, progress);
}

}  // namespace

std::string validate(const std::string& base_model, const TrainConfig& config) {
  validate(config);
  std::string dir = resolve_model(base_model);
  require_output_is_not_base(dir, config);
  return dir;
}

EncoderTrainReport train(const std::string& base_model, const std::vector<Triple>& triples,
                         const TrainConfig& config, const TrainProgressCallback& progress) {
  const std::string base_dir = validate(base_model, config);
  detail::require_uniform_triples(triples, "train");
  return train_base(base_dir, triples, config, progress);
}

EncoderTrainReport train_from_source(const std::string& base_model, const TripleSource& source,
                                     const TrainConfig& config, const TrainProgressCallback& progress) {
  validate(config);
  validate(source);  // the triples' settings too, before the base model is looked up
  const std::string base_dir = validate(base_model, config);
  TrainConfig described = config;
  if (described.data_description.empty()) described.data_description = describe(source);
  return train_base(base_dir, build_triples(source), described, progress);
}

}  // namespace counterpoint::training
