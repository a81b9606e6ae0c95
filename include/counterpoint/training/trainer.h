// counterpoint/training/trainer.h: fine-tuning an encoder on triples, and writing the result as a
// complete model directory that Encoder::load accepts. Owns the optimisation loop (AdamW, linear
// warm-up and decay, gradient clipping) over the whole network or a head on its pooled output,
// the deterministic batch order (no group twice in a batch), resumable checkpoints and dev-set
// early stopping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/training/losses.h"
#include "counterpoint/training/triples.h"

namespace counterpoint {
class Encoder;
}

namespace counterpoint::training {

enum class LossKind { kSparseCL, kContrastive };
LossKind parse_loss_kind(const std::string& name);  // "sparsecl", "contrastive"
std::string to_string(LossKind kind);

// What learns. kNetwork: every parameter of the network (and its head, when the base model has
// one). kHead: only a linear head on the pooled embedding, the network frozen; each distinct
// text is encoded once, so a step costs almost nothing and many epochs are cheap on a CPU. A
// base model without a head starts from the identity (exactly the base model's embeddings);
// one with a head goes on training it.
enum class TrainedWeights { kNetwork, kHead };
TrainedWeights parse_trained_weights(const std::string& name);  // "network", "head"
std::string to_string(TrainedWeights weights);

struct TrainConfig {
  LossKind loss = LossKind::kSparseCL;
  SparsityKind sparsity = SparsityKind::kHoyer;
  TrainedWeights trained_weights = TrainedWeights::kNetwork;
  double temperature = 0.02;
  double hard_negative_weight = 0.0;
  std::size_t epochs = 1;
  std::size_t batch_size = 64;
  double learning_rate = 2e-5;
  double weight_decay = 0.01;
  double warmup_ratio = 0.1;   // share of all steps with a linear learning-rate ramp
  double max_grad_norm = 1.0;  // 0 = no clipping
  std::uint64_t seed = 42;
  // Prefix of every anchor, in training and (written to the manifest) at query time; Prompt+CL
  // uses "Not true: ". Unset = the base model's query prefix.
  std::optional<std::string> query_prefix;
  int threads = 0;  // libtorch intra-op threads; 0 = all hardware threads
  // Receives model.pt, the tokenizer file and manifest.json; checkpoints go to <output_dir>/checkpoint.
  std::string output_dir;
  std::size_t checkpoint_every = 0;  // steps; 0 = no checkpoints
  // Continue from <output_dir>/checkpoint when one exists (same triples and config required).
  bool resume = true;
  std::size_t max_steps = 0;  // stop after this many steps in all (0 = all epochs)
  // Dev evaluation (higher is better), run every `eval_every` steps (0 = after each epoch) with the
  // model in eval mode. With patience > 0, training stops after that many evaluations without a
  // new best; the best weights are the ones written.
  std::function<double(Encoder&)> dev_evaluation;
  std::size_t eval_every = 0;
  std::size_t patience = 0;
  // Provenance written to the manifest.
  std::string model_name;  // default: base name + "-" + loss
  std::string data_description;
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
  std::vector<double> dev_scores;
  std::optional<double> best_dev_score;
  bool stopped_early = false;
  std::string output_dir;
};

// Batches of triple indices for one epoch: shuffled with seed + epoch, then filled greedily so
// that no batch holds two triples of one group (non-empty group) or one text twice as anchor or
// positive; an incomplete last batch is dropped. InvalidArgument if batch_size < 1 or there are
// fewer distinct groups than batch_size.
std::vector<std::vector<std::size_t>> make_batches(const std::vector<Triple>& triples,
                                                   std::size_t batch_size, std::uint64_t seed,
                                                   std::size_t epoch);

// Fine-tunes `encoder`'s network, or installs and trains its head, in place, and writes the model
// directory to config.output_dir.
TrainReport train(Encoder& encoder, const std::vector<Triple>& triples, const TrainConfig& config,
                  const TrainProgressCallback& progress = {});
// Loads the model directory `base_model_dir`, then trains as above.
TrainReport train(const std::string& base_model_dir, const std::vector<Triple>& triples,
                  const TrainConfig& config, const TrainProgressCallback& progress = {});

}  // namespace counterpoint::training
