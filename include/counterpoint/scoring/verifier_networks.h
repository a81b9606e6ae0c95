// counterpoint/scoring/verifier_networks.h: the libtorch side of the map verifiers, shared by
// scoring (BuiltinMapVerifier, TorchScriptMapVerifier) and training (verifier_trainer.h).
// Owns the conversion of token maps into the verifier input tensors, the F3/F4 networks, and
// the verifier directory format. Include it only where libtorch is linked.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "counterpoint/core/matrix.h"
#include "counterpoint/scoring/map_verifier.h"

namespace counterpoint::scoring {

struct MapBatch {
  torch::Tensor maps;   // [B, 3, S, S]: M, row max broadcast along the row, column max along the column
  torch::Tensor valid;  // [B, S, S]: 1 where a real (query token, candidate token) pair lies
};
// Maxima are taken over the whole map before it is zero-padded or cropped to S x S. Empty maps
// or NaN/Inf throw InvalidArgument naming `who` and the map's position.
MapBatch make_map_batch(const std::vector<const Matrix*>& maps, int64_t map_size, const std::string& who);

// The same batch built from token-state tensors, differentiable in both of them, for training a
// verifier end to end with its encoder. Pair p maps query_tokens[query_index[p]] against
// candidate_tokens[candidate_index[p]]. Token tensors are [N, T, H] with L2-normalised rows that
// are zero past each text's length (int64 [N]); index tensors are int64 [P]. Channels, maxima
// over the whole map, cropping and zero padding are those of the Matrix version, so both give
// the same input for the same texts. A length below 1 or a non-finite map throws InvalidArgument.
MapBatch make_map_batch(const torch::Tensor& query_tokens, const torch::Tensor& query_lengths,
                        const torch::Tensor& candidate_tokens, const torch::Tensor& candidate_lengths,
                        const torch::Tensor& query_index, const torch::Tensor& candidate_index, int64_t map_size,
                        const std::string& who);

// Scores `maps` kMapsPerForward at a time with gradients off, so the memory a call needs does not
// grow with the number of candidates. `forward` returns one float score per map of its batch.
constexpr std::size_t kMapsPerForward = 64;
std::vector<float> score_in_batches(const std::vector<const Matrix*>& maps, int64_t map_size, const std::string& who,
                                    const std::function<torch::Tensor(const MapBatch&)>& forward);

// forward(maps [B, 3, S, S], valid [B, S, S]) -> scores [B] in [-1, 1].
class VerifierNetwork : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& maps, const torch::Tensor& valid) = 0;
};

// A network of `shape` with libtorch's default initialisation (seed it with torch::manual_seed).
std::shared_ptr<VerifierNetwork> make_verifier_network(const VerifierShape& shape);

// Writes <directory>/weights.pt and <directory>/verifier.json; `training` is a JSON object
// recorded as provenance. BuiltinMapVerifier::load reads the result.
void save_verifier_directory(const std::string& directory, VerifierNetwork& network,
                             const VerifierShape& shape, const std::string& training_json);

}  // namespace counterpoint::scoring
