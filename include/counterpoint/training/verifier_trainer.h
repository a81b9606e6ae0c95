// counterpoint/training/verifier_trainer.h: training the built-in map verifiers (F3 CNN, F4 patch
// Transformer) on token maps of an encoder, and measuring how well any map score separates
// paraphrases from near-misses. With the encoder frozen, its token vectors are computed once per
// text; end to end, a copy of the encoder is trained with the verifier and written beside it.
// Each step scores every anchor against all in-batch positives plus its own negatives and
// minimises map_verifier_loss. Output is a verifier directory that BuiltinMapVerifier::load reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/core/matrix.h"
#include "counterpoint/scoring/map_verifier.h"
#include "counterpoint/training/near_miss.h"
#include "counterpoint/training/trainer.h"

namespace counterpoint {
class Encoder;
}

namespace counterpoint::training {

struct VerifierTrainConfig {
  scoring::VerifierShape shape;  // architecture and sizes (CPU-sized defaults, see VerifierShape)
  double temperature = 0.1;
  std::size_t epochs = 3;
  std::size_t batch_size = 32;  // maps per step: batch_size * (batch_size + negatives per triple)
  double learning_rate = 1e-4;
  double weight_decay = 0.01;
  double warmup_ratio = 0.1;
  double max_grad_norm = 1.0;  // 0 = no clipping
  std::uint64_t seed = 42;     // initialisation, data order and dropout
  int threads = 0;             // libtorch intra-op threads; 0 = all hardware threads
  std::string output_dir;      // receives verifier.json and weights.pt
  // When not empty: after every epoch, the near-miss ROC-AUC on these pairs (higher is better);
  // the weights of the best epoch are the ones written. With patience > 0, training stops after
  // that many epochs without a new best.
  std::vector<LabeledPair> dev_pairs;
  std::size_t patience = 0;
  std::string data_description;  // provenance written to verifier.json
  // > 0: train the encoder end to end with the verifier, at this learning rate in its own AdamW
  // parameter group (same warm-up and decay; the reference pairs about 1.5e-5 for the encoder
  // with 1e-4 for the verifier). A copy of the encoder is trained, never the caller's; it is
  // written to <output_dir>/encoder, and the verifier is then meant for token maps of that
  // encoder (build the index with it). 0 = frozen encoder.
  double encoder_learning_rate = 0.0;
  std::string encoder_name;  // manifest name of the fine-tuned encoder; default "<base name>-verifier"
  // Checkpoints go to <output_dir>/checkpoint every `checkpoint_every` steps (0 = none) and when
  // the progress callback cancels; they hold the verifier, the optimizer, the tuned encoder (end
  // to end) and the best epoch so far. With `resume`, a run continues from the checkpoint found
  // there (same triples and configuration required) and ends as an uninterrupted one would.
  std::size_t checkpoint_every = 0;
  bool resume = true;
};

struct VerifierTrainReport {
  std::size_t steps = 0;         // steps taken in all, including those of a resumed run
  std::size_t resumed_from = 0;  // step the run continued from (0 = fresh start)
  double final_loss = 0.0;
  std::vector<double> loss_curve;    // one value per step
  double examples_per_second = 0.0;  // triples per second, token encoding and evaluation excluded
  std::vector<double> dev_scores;    // near-miss ROC-AUC after each epoch
  std::optional<double> best_dev_score;
  bool stopped_early = false;
  std::string output_dir;
  std::string encoder_dir;  // the fine-tuned encoder's model directory when trained end to end, else ""
};

// Trains a fresh verifier of config.shape. Every triple needs the same number (>= 0) of
// negatives; bad configuration or triples throw InvalidArgument before any work, and so does a
// step whose activations (batch_size * (batch_size + negatives) maps) would need more than half
// of the machine's memory. The progress
// callback may return false to stop with Cancelled.
VerifierTrainReport train_verifier(const Encoder& encoder, const std::vector<Triple>& triples,
                                   const VerifierTrainConfig& config,
                                   const TrainProgressCallback& progress = {});

// Scores token maps, e.g. scoring::map_maxsim over each map or a MapVerifier's score().
using MapScorer = std::function<std::vector<float>(const std::vector<Matrix>& maps)>;

struct NearMissReport {
  std::vector<float> paraphrase_scores;  // in the order of the paraphrase pairs
  std::vector<float> near_miss_scores;
  double auc = 0.0;  // roc_auc(paraphrase_scores, near_miss_scores): 1 = every near-miss rejected
};

// Encodes each pair's query (query role) and candidate (document role) into token vectors,
// scores their token_cosine_map with `scorer`, and reports how well the scores separate
// paraphrases (should score high) from near-misses. Needs at least one pair of each label.
NearMissReport evaluate_near_misses(const Encoder& encoder, const std::vector<LabeledPair>& pairs,
                                    const MapScorer& scorer);

}  // namespace counterpoint::training
