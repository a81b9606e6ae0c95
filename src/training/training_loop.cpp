#include "counterpoint/training/training_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/core/json_document.h"
#include "fine_tuning.h"
#include "run_loop.h"

#include <unistd.h>

namespace counterpoint::training {

std::string format_progress(const TrainProgress& p) {
  const auto eta = static_cast<long long>(std::llround(std::max(0.0, p.eta_seconds)));
  char line[160];
  std::snprintf(line, sizeof line, "step %zu/%zu epoch %zu loss %.4f lr %.2g %.1f ex/s ETA %lld:%02lld:%02lld",
                p.step, p.total_steps, p.epoch + 1, p.loss, p.learning_rate, p.examples_per_second,
                eta / 3600, (eta / 60) % 60, eta % 60);
  return line;
}

namespace {

// What bounds a batch: the triples' distinct groups, a triple without a group its own.
struct GroupCount {
  std::size_t groups = 0;  // distinct non-empty groups plus the ungrouped triples
  bool any_grouped = false;
};

GroupCount count_groups(const std::vector<Triple>& triples) {
  std::set<std::string> groups;
  std::size_t ungrouped = 0;
  for (const auto& t : triples) t.group.empty() ? void(++ungrouped) : void(groups.insert(t.group));
  return {groups.size() + ungrouped, !groups.empty()};
}

// "the 40 distinct groups of the triples", or "the 40 triples" when none has a group: the user's
// own data, in the terms they wrote it.
std::string describe_groups(const GroupCount& count) {
  return count.any_grouped ? "the " + std::to_string(count.groups) + " distinct groups of the triples"
                           : "the " + std::to_string(count.groups) + " triples";
}

}  // namespace

std::vector<std::vector<std::size_t>> make_batches(const std::vector<Triple>& triples,
                                                   std::size_t batch_size, std::uint64_t seed,
                                                   std::size_t epoch) {
  if (batch_size < 1) throw InvalidArgument("batch_size must be >= 1");
  const GroupCount count = count_groups(triples);
  if (count.groups < batch_size) {
    throw InvalidArgument("batch_size " + std::to_string(batch_size) + " exceeds the " +
                          std::to_string(count.groups) +
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

namespace detail {

std::size_t require_uniform_triples(const std::vector<Triple>& triples, const std::string& caller) {
  if (triples.empty()) throw InvalidArgument(caller + ": no triples");
  require_triple_sizes(triples, caller);
  const std::size_t k = triples.front().negatives.size();
  for (std::size_t i = 0; i < triples.size(); ++i) {
    if (triples[i].negatives.size() != k) {
      throw InvalidArgument(caller + ": triple " + std::to_string(i) + " has " +
                            std::to_string(triples[i].negatives.size()) + " negatives, triple 0 has " +
                            std::to_string(k) + " (every triple needs the same count)");
    }
  }
  return k;
}

// A training writes its files into its output folder, so it may fill a new or empty folder, go on
// in one that holds only what a training of the same kind writes (its checkpoint, a run killed
// before its manifest), or replace what an earlier training of that kind wrote (its manifest with
// a "training" record): never a folder of the user's own files, a corpus or an installed model.
// What makes `dir` refused ("notes.txt, which no training wrote"), or "" when it may be written.
namespace {
std::string foreign_entry(const std::string& dir, TrainedKind kind) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || fs::is_empty(dir, ec)) return {};
  const bool verifier = kind == TrainedKind::kVerifier;
  const std::string manifest = verifier ? "verifier.json" : "manifest.json";
  const std::set<std::string> written =
      verifier ? std::set<std::string>{"verifier.json", "weights.pt", "encoder", "checkpoint"}
               : std::set<std::string>{"manifest.json", "model.pt", "head.pt", "vocab.txt", "vocab.json",
                                       "checkpoint"};
  if (fs::is_regular_file(join_path(dir, manifest), ec)) {
    try {
      const nlohmann::json document = read_json_document(join_path(dir, manifest));
      if (document.is_object() && document.contains("training")) return {};
      return manifest + " of a model no training wrote";
    } catch (const Error&) {
      // Damaged (a run killed mid-write): the folder is judged by its entries below.
    }
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // Temporaries of an interrupted write: "model.pt.partial", "manifest.json.tmp.<pid>".
    const bool temporary = name.find(".partial") != std::string::npos || name.find(".tmp.") != std::string::npos;
    if (!written.count(name) && !temporary) return name + ", which no training wrote";
  }
  return {};
}
}  // namespace

void require_output_directory(const std::string& dir, const std::string& config) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw InvalidArgument(config + ".output_dir is empty");
  std::error_code ec;
  // The directory itself, else the nearest ancestor that exists: the one the run creates it in.
  for (fs::path path = dir; !path.empty(); path = path.parent_path()) {
    if (!fs::exists(path, ec)) {
      if (path == path.parent_path()) break;
      continue;
    }
    const std::string where = config + ".output_dir " + dir + ": ";
    if (!fs::is_directory(path, ec)) {
      throw IoError(where + (path == fs::path(dir) ? "it exists and is not a directory"
                                                   : path.string() + " is not a directory"));
    }
    if (::access(path.c_str(), W_OK | X_OK) != 0) throw IoError(where + path.string() + " is not writable");
    return;
  }
}

void require_training_output_folder(const std::string& dir, const std::string& config, TrainedKind kind) {
  if (const std::string entry = foreign_entry(dir, kind); !entry.empty()) {
    throw InvalidArgument(config + ".output_dir " + dir + " holds " + entry +
                          "; training writes its files into that folder: choose a new or empty folder");
  }
}

void require_valid(const OptimizerSettings& s, const LoopSettings& loop, double temperature,
                   const std::string& config) {
  require_output_directory(loop.output_dir, config);
  if (s.epochs < 1) throw InvalidArgument(config + ".epochs must be >= 1");
  if (s.batch_size < 1) throw InvalidArgument(config + ".batch_size must be >= 1");
  if (!(temperature > 0) || !std::isfinite(temperature)) {
    throw InvalidArgument(config + ".temperature must be a positive finite number");
  }
  if (!(s.learning_rate > 0) || !std::isfinite(s.learning_rate)) {
    throw InvalidArgument(config + ".learning_rate must be a positive finite number");
  }
  if (!(s.weight_decay >= 0)) throw InvalidArgument(config + ".weight_decay must be >= 0");
  if (!(s.warmup_ratio >= 0 && s.warmup_ratio <= 1)) throw InvalidArgument(config + ".warmup_ratio must be in [0, 1]");
  if (!(s.max_grad_norm >= 0)) throw InvalidArgument(config + ".max_grad_norm must be >= 0");
  if (s.threads < 0) throw InvalidArgument(config + ".threads must be >= 0");
}

double schedule_factor(std::size_t step, std::size_t total, std::size_t warmup) {
  if (step < warmup) return double(step + 1) / double(warmup);
  if (total <= warmup) return 1.0;
  return std::max(0.0, double(total - step) / double(total - warmup));
}

namespace {

// `text` for a message: quoted, and cut (at a character boundary) when long.
std::string quoted(const std::string& text) {
  constexpr std::size_t kShown = 40;
  if (text.size() <= kShown) return "'" + text + "'";
  std::size_t end = kShown;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // a continuation byte
  return "'" + text.substr(0, end) + "...' (" + std::to_string(text.size()) + " bytes)";
}

// Why make_batches found no complete batch in `triples`, in the terms of its rule: a triple whose
// positive is its anchor fits no batch, and triples that share an anchor or positive text, or a
// group, never share one. Such shares link the triples into clusters; one triple of each cluster
// always fits a batch beside the others', so the count of clusters is a batch size that is sure
// to form, and the text (or group) most shared is the cause to name.
std::string why_no_batch(const std::vector<Triple>& triples) {
  std::vector<std::size_t> cluster(triples.size());
  std::iota(cluster.begin(), cluster.end(), 0);
  const auto root = [&](std::size_t i) {
    while (cluster[i] != i) i = cluster[i] = cluster[cluster[i]];
    return i;
  };
  // How many triples use a text (as anchor or positive) or a group, and the first of them.
  struct Uses {
    std::size_t as_anchor = 0, as_positive = 0, as_group = 0, first = 0;
    std::size_t triples() const { return as_anchor + as_positive + as_group; }
  };
  std::map<std::string, Uses> texts, groups;
  std::size_t own_positive = 0, placeable = 0;
  const Triple* own = nullptr;
  const auto link = [&](std::map<std::string, Uses>& users, const std::string& key, std::size_t i) -> Uses& {
    auto [it, fresh] = users.try_emplace(key, Uses{0, 0, 0, i});
    if (!fresh) cluster[root(i)] = root(it->second.first);
    return it->second;
  };
  for (std::size_t i = 0; i < triples.size(); ++i) {
    const Triple& t = triples[i];
    if (t.anchor == t.positive) {
      ++own_positive;
      if (!own) own = &t;
      continue;
    }
    ++placeable;
    ++link(texts, t.anchor, i).as_anchor;
    ++link(texts, t.positive, i).as_positive;
    if (!t.group.empty()) ++link(groups, t.group, i).as_group;
  }
  std::string why;
  if (own_positive > 0) {
    why = (own_positive == triples.size() ? "every triple's positive is its anchor"
                                          : std::to_string(own_positive) + " of them have their anchor as positive") +
          " (e.g. " + quoted(own->anchor) + "), which no batch takes";
    if (placeable == 0) return why;
    why += "; ";
  }
  std::set<std::size_t> clusters;
  for (std::size_t i = 0; i < triples.size(); ++i) {
    if (triples[i].anchor != triples[i].positive) clusters.insert(root(i));
  }
  const auto most_shared = [](const std::map<std::string, Uses>& users) {
    auto best = users.begin();
    for (auto it = users.begin(); it != users.end(); ++it) {
      if (it->second.triples() > best->second.triples()) best = it;
    }
    return best;
  };
  const auto text = most_shared(texts);
  std::string shared;
  if (text->second.triples() > 1) {
    const char* role = text->second.as_positive == 0   ? "the anchor"
                       : text->second.as_anchor == 0 ? "the positive"
                                                     : "the anchor or positive";
    shared = "the text " + quoted(text->first) + " is " + role + " of " + std::to_string(text->second.triples()) +
             " triples";
  }
  if (!groups.empty()) {
    const auto group = most_shared(groups);
    if (group->second.triples() > 1) {
      shared += std::string(shared.empty() ? "" : " and ") + "the group " + quoted(group->first) + " holds " +
                std::to_string(group->second.triples()) + " triples";
    }
  }
  why += "triples that share an anchor or positive text, or a group, never share a batch";
  if (!shared.empty()) why += ", and " + shared;
  return why + "; linked so, " + (own_positive > 0 ? "the others" : "the triples") + " form " +
         std::to_string(clusters.size()) + " distinct group" + (clusters.size() == 1 ? "" : "s") +
         " (a batch size of at most " + std::to_string(clusters.size()) + " always fits)";
}

}  // namespace

std::string fit_batch_size(OptimizerSettings& optimizer, std::size_t default_size, const std::vector<Triple>& triples,
                           const std::string& config) {
  const GroupCount count = count_groups(triples);
  if (count.groups == 0 || optimizer.batch_size <= count.groups) return {};
  if (optimizer.batch_size != default_size) {
    throw InvalidArgument(config + ".batch_size " + std::to_string(optimizer.batch_size) + " exceeds " +
                          describe_groups(count) +
                          (count.any_grouped ? " (a batch holds each group once; a triple without a group is its own)"
                                             : " (a batch holds each triple once)") +
                          ": give at most " + std::to_string(count.groups) +
                          ", or no batch size to have one that fits the triples");
  }
  optimizer.batch_size = count.groups;
  return "batch size " + std::to_string(count.groups) + " (" + describe_groups(count) + "; default " +
         std::to_string(default_size) + ")";
}

BatchPlan plan_batches(const std::vector<Triple>& triples, const OptimizerSettings& optimizer,
                       const LoopSettings& loop, const std::string& caller) {
  BatchPlan plan;
  for (std::size_t epoch = 0; epoch < optimizer.epochs; ++epoch) {
    for (auto& batch : make_batches(triples, optimizer.batch_size, optimizer.seed, epoch)) {
      plan.emplace_back(epoch, std::move(batch));
    }
  }
  if (plan.empty()) {
    throw InvalidArgument(caller + ": " + std::to_string(triples.size()) + " triples make no complete batch of " +
                          std::to_string(optimizer.batch_size) + ": " + why_no_batch(triples));
  }
  if (loop.max_steps > 0 && loop.max_steps < plan.size()) plan.resize(loop.max_steps);
  return plan;
}

namespace {

// The run's progress as a checkpoint's state.json holds it.
struct LoopState {
  std::size_t step = 0;
  std::vector<double> loss_curve;
  std::vector<double> dev_scores;
  std::optional<double> best_dev_score;
  std::size_t evaluations_without_improvement = 0;
  bool stopped_early = false;
};

nlohmann::json to_json(const LoopState& s) {
  nlohmann::json j = {{"step", s.step}, {"loss_curve", s.loss_curve}, {"dev_scores", s.dev_scores},
                      {"evaluations_without_improvement", s.evaluations_without_improvement},
                      {"stopped_early", s.stopped_early}};
  if (s.best_dev_score) j["best_dev_score"] = *s.best_dev_score;
  return j;
}

LoopState loop_state(const nlohmann::json& j, std::size_t total, const std::string& dir) {
  if (j.contains("epochs_without_improvement")) {
    // Written before both trainers shared this loop: its steps were seeded seed + step + 1, so
    // continuing it would make a run no uninterrupted one could be.
    throw InvalidArgument("checkpoint in " + dir +
                          " was written by an earlier version of the verifier trainer (its steps were seeded "
                          "differently); delete its checkpoint directory to train afresh");
  }
  LoopState s;
  s.step = j.at("step").get<std::size_t>();
  s.loss_curve = j.at("loss_curve").get<std::vector<double>>();
  s.dev_scores = j.at("dev_scores").get<std::vector<double>>();
  s.evaluations_without_improvement = j.at("evaluations_without_improvement").get<std::size_t>();
  if (j.contains("best_dev_score")) s.best_dev_score = j["best_dev_score"].get<double>();
  s.stopped_early = j.value("stopped_early", false);
  if (s.step == 0 || s.step > total || s.loss_curve.size() != s.step) {
    throw CorruptFile("checkpoint state of " + dir + " is inconsistent (step " + std::to_string(s.step) + ", " +
                      std::to_string(s.loss_curve.size()) + " losses, " + std::to_string(total) +
                      " steps in all)");
  }
  return s;
}

}  // namespace

TrainReport run_loop(const BatchPlan& plan, const OptimizerSettings& settings, const LoopSettings& loop,
                     LoopTask& task, const TrainProgressCallback& progress) {
  const std::size_t total = plan.size();
  const auto warmup = std::size_t(std::ceil(settings.warmup_ratio * double(total)));
  nlohmann::json fingerprint = task.fingerprint;
  fingerprint["total_steps"] = total;
  auto& groups = task.optimizer->param_groups();
  if (groups.size() != task.base_rates.size()) {
    throw Error("training loop: " + std::to_string(task.base_rates.size()) + " learning rates for " +
                std::to_string(groups.size()) + " parameter groups");
  }

  LoopState state;
  TrainReport report;
  report.output_dir = loop.output_dir;
  const auto save_checkpoint = [&] {
    write_checkpoint(loop.output_dir, to_json(state), fingerprint, task.save_files);
  };
  if (loop.resume) {
    const bool resumed = read_checkpoint(
        loop.output_dir, fingerprint,
        [&](const nlohmann::json& j) { state = loop_state(j, total, loop.output_dir); }, task.load_files);
    if (resumed) report.resumed_from = state.step;
  }

  const auto evaluate = [&] {
    task.set_training(false);
    const double score = task.evaluate();
    task.set_training(true);
    state.dev_scores.push_back(score);
    if (!state.best_dev_score || score > *state.best_dev_score) {
      state.best_dev_score = score;
      task.keep_best();
      state.evaluations_without_improvement = 0;
    } else {
      ++state.evaluations_without_improvement;
    }
  };

  task.set_training(true);
  using Clock = std::chrono::steady_clock;
  double training_seconds = 0;
  std::size_t examples = 0;
  const std::size_t first_step = state.step;
  // A run that had stopped early stays stopped when resumed.
  while (state.step < total && !state.stopped_early) {
    const auto started = Clock::now();
    const auto& [epoch, batch] = plan[state.step];
    torch::manual_seed(settings.seed + state.step);
    const double factor = schedule_factor(state.step, total, warmup);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      static_cast<torch::optim::AdamWOptions&>(groups[g].options()).lr(task.base_rates[g] * factor);
    }
    torch::Tensor loss = task.batch_loss(batch);
    task.optimizer->zero_grad();
    loss.backward();
    if (settings.max_grad_norm > 0) torch::nn::utils::clip_grad_norm_(task.clipped, settings.max_grad_norm);
    task.optimizer->step();
    const double loss_value = loss.item<double>();
    if (!std::isfinite(loss_value)) {
      throw Error(task.name + " diverged: loss is " + std::to_string(loss_value) + " at step " +
                  std::to_string(state.step + 1) + " " + task.diverged_hint);
    }
    state.loss_curve.push_back(loss_value);
    ++state.step;
    examples += batch.size();
    training_seconds += std::chrono::duration<double>(Clock::now() - started).count();

    const bool epoch_end = state.step == total || plan[state.step].first != epoch;
    bool stop = false;
    if (task.evaluate && (loop.eval_every > 0 ? (state.step % loop.eval_every == 0 || state.step == total)
                                              : epoch_end)) {
      evaluate();
      stop = loop.patience > 0 && state.evaluations_without_improvement >= loop.patience;
    }
    const bool checkpoint_due = loop.checkpoint_every > 0 && state.step % loop.checkpoint_every == 0;
    if (checkpoint_due) save_checkpoint();

    TrainProgress p;
    p.step = state.step;
    p.total_steps = total;
    p.epoch = epoch;
    p.loss = loss_value;
    p.learning_rate = task.base_rates.front() * factor;
    p.examples_per_second = double(examples) / std::max(training_seconds, 1e-9);
    p.eta_seconds = training_seconds / double(state.step - first_step) * double(total - state.step);
    if (progress && !progress(p)) {
      if (loop.checkpoint_every > 0 && !checkpoint_due) save_checkpoint();
      throw Cancelled(task.name + " cancelled after step " + std::to_string(state.step) + " of " +
                      std::to_string(total));
    }
    if (stop) {
      state.stopped_early = true;
      if (loop.checkpoint_every > 0) save_checkpoint();
    }
  }

  if (state.best_dev_score) task.restore_best();
  report.steps = state.step;
  report.stopped_early = state.stopped_early;
  report.loss_curve = state.loss_curve;
  report.final_loss = state.loss_curve.empty() ? 0.0 : state.loss_curve.back();
  report.examples_per_second = training_seconds > 0 ? double(examples) / training_seconds : 0.0;
  report.dev_scores = state.dev_scores;
  report.best_dev_score = state.best_dev_score;
  return report;
}

}  // namespace detail
}  // namespace counterpoint::training
