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

// The optimiser and loop settings (training_loop.h) with the verifier's defaults (3 epochs,
// batch 32, learning rate 1e-4), and the verifier's own settings. Dev evaluation is the
// near-miss ROC-AUC on dev_pairs, when there are any.
struct VerifierTrainConfig : OptimizerSettings, LoopSettings {
  VerifierTrainConfig() {
    epochs = 3;
    batch_size = 32;  // maps per step: batch_size * (batch_size + negatives per triple)
    learning_rate = 1e-4;
  }
  scoring::VerifierShape shape;  // architecture and sizes (CPU-sized defaults, see VerifierShape)
  double temperature = 0.1;
  std::vector<LabeledPair> dev_pairs;
  // > 0: train the encoder end to end with the verifier, at this learning rate in its own AdamW
  // parameter group (same warm-up and decay; the reference pairs about 1.5e-5 for the encoder
  // with 1e-4 for the verifier). A copy of the encoder is trained, never the caller's; it is
  // written to <output_dir>/encoder, and the verifier is then meant for token maps of that
  // encoder (build the index with it). 0 = frozen encoder. Checkpoints then hold the tuned
  // encoder too.
  double encoder_learning_rate = 0.0;
  std::string encoder_name;  // manifest name of the fine-tuned encoder; default "<base name>-verifier"
};

struct VerifierTrainReport : TrainReport {
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

// Checks `config` before any work, without triples: the shape, the numeric ranges, the output
// directory (as validate(TrainConfig)), dev_pairs with both labels when given. InvalidArgument
// or IoError naming the setting. train_verifier runs it, and the checks that need the triples.
void validate(const VerifierTrainConfig& config);

struct VerifierSourceReport : VerifierTrainReport {
  std::size_t triples = 0;   // near-miss triples of the pairs file
  std::size_t inverted = 0;  // copies with an inverted anchor as the negative, trained on besides
};

// What `counterpoint train verifier` runs: validates `config` and `source`, then builds the
// near-miss triples (and dev pairs, which replace config.dev_pairs), loads `model` (a directory
// or an installed model's name) and trains as above. An empty config.data_description becomes
// describe(source).
VerifierSourceReport train_verifier_from_source(const std::string& model, const NearMissSource& source,
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
