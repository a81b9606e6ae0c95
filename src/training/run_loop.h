// Internal to the training layer: the one optimisation loop every trainer runs. A trainer builds
// its model and optimiser, then hands the loop a LoopTask: the loss of one batch, the dev
// evaluation, and how its weights go into and out of checkpoints and the best-so-far snapshot.
// The loop owns the rest: the batch plan, the learning-rate schedule, clipping, divergence and
// cancellation, evaluation scheduling and early stopping, checkpoint state, the report.
#pragma once

#include <torch/torch.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "counterpoint/training/training_loop.h"

namespace counterpoint::training::detail {

// InvalidArgument naming `caller` (e.g. "train") for no triples, a triple above kMaxTripleBytes or
// triples with differing negative counts; returns that count.
std::size_t require_uniform_triples(const std::vector<Triple>& triples, const std::string& caller);

// InvalidArgument naming `config` (e.g. "TrainConfig") when `dir` is empty; IoError when it is a
// file, lies under one, or the directory it would be made in is not writable.
void require_output_directory(const std::string& dir, const std::string& config);
// What a training writes into its output folder: a model directory or a verifier directory.
enum class TrainedKind { kEncoder, kVerifier };
// InvalidArgument naming `config` unless `dir` is new, empty, or holds only what a training of
// `kind` writes (an earlier such training's model or verifier, its checkpoint, the temporaries of
// an interrupted run): training writes its files into the folder, so a folder of the user's
// files, a corpus or an installed model is refused, naming the entry that is not a training's.
void require_training_output_folder(const std::string& dir, const std::string& config, TrainedKind kind);

// InvalidArgument naming `config` (e.g. "TrainConfig") and the first bad field; the output
// directory as require_output_directory checks it.
void require_valid(const OptimizerSettings& optimizer, const LoopSettings& loop, double temperature,
                   const std::string& config);

// Learning-rate factor of step s (0-based): linear ramp to 1 over the warm-up steps (the first
// step already moves), then linear decay to 0 at the last step.
double schedule_factor(std::size_t step, std::size_t total, std::size_t warmup);

// Settles `optimizer`'s batch size against the triples' distinct groups (OptimizerSettings): lowers
// the config's default (`default_size`) to their count and returns the note that says so, "" when it
// fits; InvalidArgument naming `config`.batch_size (e.g. "TrainConfig") for another batch size
// that exceeds them.
std::string fit_batch_size(OptimizerSettings& optimizer, std::size_t default_size, const std::vector<Triple>& triples,
                           const std::string& config);

// Every step of a run, in order: (epoch, triple indices). make_batches per epoch, cut at
// max_steps. InvalidArgument naming `caller` when the triples make no complete batch.
using BatchPlan = std::vector<std::pair<std::size_t, std::vector<std::size_t>>>;
BatchPlan plan_batches(const std::vector<Triple>& triples, const OptimizerSettings& optimizer,
                       const LoopSettings& loop, const std::string& caller);

struct LoopTask {
  std::string name;           // "training", "verifier training": begins the loop's messages
  std::string diverged_hint;  // appended to the divergence error, e.g. "(try a lower learning rate)"
  torch::optim::Optimizer* optimizer = nullptr;
  std::vector<double> base_rates;     // peak learning rate of each parameter group, in order
  std::vector<torch::Tensor> clipped; // parameters whose gradient norm max_grad_norm bounds
  // What a resumed run must share with the interrupted one; the loop adds the step count.
  nlohmann::json fingerprint;

  // Loss of the batch (triple indices), with gradients.
  std::function<torch::Tensor(const std::vector<std::size_t>& batch)> batch_loss;
  std::function<void(bool training)> set_training;
  // Dev score, higher is better; empty = no dev evaluation. Runs between set_training(false) and
  // set_training(true).
  std::function<double()> evaluate;
  std::function<void()> keep_best;     // the current weights become the best so far
  std::function<void()> restore_best;  // back to the best weights (only called when there are some)
  // The trainer's files of a checkpoint (weights, optimiser, best snapshot), into / from `dir`.
  std::function<void(const std::string& dir)> save_files;
  std::function<void(const std::string& dir)> load_files;
};

// Runs `task` over `plan`, resuming from <output_dir>/checkpoint when the settings allow it, and
// leaves the best evaluation's weights in place. The report's output_dir is the settings'.
TrainReport run_loop(const BatchPlan& plan, const OptimizerSettings& optimizer, const LoopSettings& loop,
                     LoopTask& task, const TrainProgressCallback& progress);

}  // namespace counterpoint::training::detail
