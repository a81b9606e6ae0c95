// counterpoint/training/trainer.h: fine-tuning an encoder on triples (SparseCL or contrastive
// loss, over the whole network or a head on its pooled output), and writing the result as a
// complete model directory that Encoder::load accepts. The loop itself, its settings and its
// report are training_loop.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/training/losses.h"
#include "counterpoint/training/training_loop.h"
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

// The optimiser and loop settings (training_loop.h) with the encoder trainer's defaults, and the
// loss and model settings of an encoder run.
struct TrainConfig : OptimizerSettings, LoopSettings {
  LossKind loss = LossKind::kSparseCL;
  Sparsity sparsity = Sparsity::kHoyer;
  TrainedWeights trained_weights = TrainedWeights::kNetwork;
  double temperature = 0.02;
  double hard_negative_weight = 0.0;
  // Prefix of every anchor, in training and (written to the manifest) at query time; Prompt+CL
  // uses "Not true: ". Unset = the base model's query prefix.
  std::optional<std::string> query_prefix;
  // Dev evaluation of the model in training (higher is better), on LoopSettings' schedule.
  std::function<double(Encoder&)> dev_evaluation;
  std::string model_name;  // written to the manifest; default: base name + "-" + loss
};

// Fine-tunes `encoder`'s network, or installs and trains its head, in place, and writes the model
// directory to config.output_dir.
TrainReport train(Encoder& encoder, const std::vector<Triple>& triples, const TrainConfig& config,
                  const TrainProgressCallback& progress = {});
// Loads the model directory `base_model_dir`, then trains as above.
TrainReport train(const std::string& base_model_dir, const std::vector<Triple>& triples,
                  const TrainConfig& config, const TrainProgressCallback& progress = {});

}  // namespace counterpoint::training
