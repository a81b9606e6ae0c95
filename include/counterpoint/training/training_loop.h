// counterpoint/training/training_loop.h: what every trainer shares. The optimiser settings and
// the loop settings (where a run writes, when it checkpoints, evaluates and stops) that both
// TrainConfig and VerifierTrainConfig are made of, the deterministic batch order, the progress
// callback and the report. One loop (src/training/training_loop.cpp) runs every trainer: AdamW
// with linear warm-up and decay, gradient clipping, dev evaluation with early stopping and the
// best weights kept, resumable checkpoints, cancellation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/training/triples.h"

namespace counterpoint::training {

// How the weights move. The defaults are the encoder trainer's; VerifierTrainConfig sets its own.
struct OptimizerSettings {
  std::size_t epochs = 1;
  // Triples per step. A batch holds each group of the triples once (a triple without a group is
  // its own), so the triples' distinct groups bound it. The config's default batch size above that
  // bound is lowered to it and the run's notes say so, so that a user who chose none trains on few
  // triples; any other batch size that does not fit is refused (InvalidArgument naming batch_size).
  std::size_t batch_size = 64;
  double learning_rate = 2e-5;
  double weight_decay = 0.01;
  double warmup_ratio = 0.1;   // share of all steps with a linear learning-rate ramp
  double max_grad_norm = 1.0;  // 0 = no clipping
  // Initialisation, data order and dropout. Step s (0-based) reseeds torch with seed + s, so the
  // step index alone fixes its randomness and a resumed run continues exactly.
  std::uint64_t seed = kDefaultSeed;
  int threads = 0;  // libtorch intra-op threads; 0 = all hardware threads
};

// Where a run writes, when it checkpoints, evaluates and stops.
struct LoopSettings {
  // Receives the trained model; checkpoints go to <output_dir>/checkpoint.
  std::string output_dir;
  // Checkpoints every `checkpoint_every` steps (0 = none), and when the progress callback cancels.
  std::size_t checkpoint_every = 0;
  // Continue from <output_dir>/checkpoint when one exists (same triples and configuration
  // required); the run then ends as an uninterrupted one would.
  bool resume = true;
  std::size_t max_steps = 0;  // stop after this many steps in all (0 = all epochs)
  // Dev evaluation (when the trainer has a dev set) every `eval_every` steps and after the last
  // (0 = after each epoch), in eval mode; the best evaluation's weights are the ones written.
  // With patience > 0, training stops after that many evaluations without a new best.
  std::size_t eval_every = 0;
  std::size_t patience = 0;
  std::string data_description;  // provenance written beside the model
};

struct TrainProgress {
  std::size_t step = 0;  // optimizer steps done
  std::size_t total_steps = 0;
  std::size_t epoch = 0;  // 0-based
  double loss = 0.0;      // of the last batch
  double learning_rate = 0.0;
  double examples_per_second = 0.0;
  double eta_seconds = 0.0;
};
// Called after every step; returning false stops training with Cancelled (a checkpoint is
// written first when checkpoints are enabled).
using TrainProgressCallback = std::function<bool(const TrainProgress&)>;
// "step 12/300 epoch 1 loss 0.4321 lr 1.2e-05 85.3 ex/s ETA 0:03:22"
std::string format_progress(const TrainProgress& progress);

struct TrainReport {
  std::size_t steps = 0;          // steps taken in all, including those of a resumed run
  std::size_t resumed_from = 0;   // step the run continued from (0 = fresh start)
  double final_loss = 0.0;
  std::vector<double> loss_curve;  // one value per step
  double examples_per_second = 0.0;  // triples per second in this process, evaluation excluded
  std::vector<double> dev_scores;    // one per evaluation (higher is better)
  std::optional<double> best_dev_score;
  bool stopped_early = false;
  std::string output_dir;
  // What the run decided for the user or warns about, one line each in the order they arose (a
  // batch size lowered to fit the triples, alpha tuned on few dev queries): the CLI prints each on
  // stderr, the Python trainers issue each as a UserWarning.
  std::vector<std::string> notes;
};

// Batches of triple indices for one epoch: shuffled with seed + epoch, then filled greedily so
// that no batch holds two triples of one group (non-empty group) or one text twice as anchor or
// positive; an incomplete last batch is dropped. InvalidArgument if batch_size < 1 or there are
// fewer distinct groups than batch_size.
std::vector<std::vector<std::size_t>> make_batches(const std::vector<Triple>& triples,
                                                   std::size_t batch_size, std::uint64_t seed,
                                                   std::size_t epoch);

}  // namespace counterpoint::training
