// counterpoint/training/trainer.h: fine-tuning an encoder on triples (SparseCL or contrastive
// loss, over the whole network or a head on its pooled output), writing the result as a
// complete model directory that Encoder::load accepts, and tuning on held-out triples the alpha
// searches with it use, recorded in its manifest. The loop itself, its settings and its report
// are training_loop.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/encoder/defaults.h"
#include "counterpoint/eval/retrieval_task.h"
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
// one). kHead: only a head on the pooled embedding (TrainConfig.head_kind), the network frozen; each
// distinct text is encoded once, so a step costs almost nothing and many epochs are cheap on a
// CPU. A base model without a head starts from starting_head() (exactly the base model's
// embeddings); one with a head goes on training it.
enum class TrainedWeights { kNetwork, kHead };
TrainedWeights parse_trained_weights(const std::string& name);  // "network", "head"
std::string to_string(TrainedWeights weights);

// The optimiser and loop settings (training_loop.h) with the encoder trainer's defaults, and the
// loss and model settings of an encoder run.
struct TrainConfig : OptimizerSettings, LoopSettings {
  LossKind loss = LossKind::kSparseCL;
  Sparsity sparsity = Sparsity::kHoyer;
  TrainedWeights trained_weights = TrainedWeights::kNetwork;
  // Network training with the token embeddings and the bottom `frozen_layers` transformer layers
  // frozen (a model whose parameters are named layers.<i>.*, as every BERT-family model here): no
  // gradient flows below the first trained layer, so backward passes and optimiser state shrink
  // with it, and the lower layers keep the base model's general-purpose features. 0 = every
  // layer learns; at most the layer count - 1 (freezing all of them is head-only training).
  std::size_t frozen_layers = 0;
  // Head-only training over a base model without a head: the head it installs (manifest.h's
  // HeadKind) and, for kMlp, its hidden width. A base model's own head must be of this kind. Linear
  // stays the default: an MLP head gains on ArguAna dev but loses on SICK dev and on the default
  // Es's dev triples (benchmarks/README.md, "Richer heads").
  HeadKind head_kind = HeadKind::kLinear;
  std::size_t head_hidden = 1536;
  double temperature = 0.02;
  double hard_negative_weight = 0.0;
  // Prefix of every anchor, in training and (written to the manifest) at query time; Prompt+CL
  // uses "Not true: ". Unset = the base model's query prefix.
  std::optional<std::string> query_prefix;
  // Dev evaluation of the model in training (higher is better), on LoopSettings' schedule.
  std::function<double(Encoder&)> dev_evaluation;
  std::string model_name;  // written to the manifest; default: base name + "-" + loss
  // Held-out triple files (load_tsv_triples), each holding triples: a file of none is refused
  // (InvalidArgument naming it) before training. When given, after training the alpha of
  // cos(E) + alpha * sparsity(Es) is tuned on them (dev_task, eval::tune_alpha_on_task), the
  // trained model as Es, and recorded in its manifest (eval::record_tuned_alpha): the alpha a
  // search with it then uses (retrieval::choose_alpha).
  std::vector<std::string> dev_triples;
  // Held-out triples already in memory, tuned on beside (or in place of) dev_triples' files; the
  // manifest records their count.
  std::vector<Triple> dev_triples_in_memory;
  // E of that tuning: a model directory or an installed model's name (resolve_model).
  std::string dense_model = kDefaultDenseModel;
  // The magnitude gates tau tried in that tuning (alpha tuned at each, the first strict maximum
  // recorded as training.sparsity_scale; list 0 first so a gate must beat none). The default {0}
  // tunes alpha alone: on SICK and ArguAna dev a gate gained at most +0.006 nDCG@10
  // (benchmarks/results/sparsity_scale_all-minilm-l6-v2.md), so it stays an option. Es rows are
  // L2-normalised: |Es(q) - Es(p)|_2 lies in [0, 2].
  std::vector<float> sparsity_scales = {0.0f};
  // Head-only training: a FeatureCache folder whose pooled features of the network are reused
  // (and the missing ones kept), so that head variants on one corpus cost no forward pass. "" =
  // every distinct text is encoded once for this run.
  std::string feature_cache;
};

// Checks `config` before any work, without loading anything: the numeric ranges, the output
// directory (set, not a file, not under one), and with dev_triples the files (regular files) and
// the dense model (resolvable). InvalidArgument, FileNotFound or IoError naming the setting.
void validate(const TrainConfig& config);
// What every train function checks before any work: validate(config), `base_model` resolves (by
// name or folder), config.output_dir is not its directory (InvalidArgument naming it) and holds
// nothing but an earlier training's model or checkpoint (never a folder of other files).
// Returns the base model's directory.
std::string validate(const std::string& base_model, const TrainConfig& config);

// Below this many dev queries, a setting tuned on them (alpha, the sparsity scale, a decision
// threshold) may fit those queries and not carry over to others.
inline constexpr std::size_t kFewDevQueries = 20;
// The warning a run's notes carry when `what` ("alpha", "alpha and the sparsity scale tau") was
// tuned on fewer than kFewDevQueries dev queries, "" otherwise; `search_setting` is what a search
// takes instead ("alpha"): "alpha tuned on 2 dev queries (fewer than 20): it may not carry over;
// give more dev triples or pass alpha at search time". The one wording of that warning for every
// setting tuned on dev.
std::string few_dev_queries_warning(const std::string& what, std::size_t queries, const std::string& search_setting);

struct EncoderTrainReport : TrainReport {
  std::size_t triples = 0;  // trained on
  // The tuning on config.dev_triples, already recorded in the manifest; unset without dev triples.
  std::optional<eval::TaskAlphaTuning> alpha_tuning;
  std::string dense_model;  // E's manifest name, with alpha_tuning
};

// Fine-tunes `encoder`'s network, or installs and trains its head, in place, writes the model
// directory to config.output_dir, then tunes and records alpha when config.dev_triples is set.
// `config` is validated first; InvalidArgument when config.output_dir is the encoder's directory.
EncoderTrainReport train(Encoder& encoder, const std::vector<Triple>& triples, const TrainConfig& config,
                         const TrainProgressCallback& progress = {});
// Validates `config`, then loads `base_model` (a model directory or an installed model's name)
// and trains as above.
EncoderTrainReport train(const std::string& base_model, const std::vector<Triple>& triples,
                         const TrainConfig& config, const TrainProgressCallback& progress = {});
// What `counterpoint train sparsecl|contrastive` runs: validates `config` and `source` (ranges,
// files, the output directory, the models' names), then builds the triples, loads the base model
// and trains as above. An empty config.data_description becomes describe(source).
EncoderTrainReport train_from_source(const std::string& base_model, const TripleSource& source,
                                     const TrainConfig& config, const TrainProgressCallback& progress = {});

}  // namespace counterpoint::training
