// Internal to the training layer: what both trainers share: an encoder's trainable parameters,
// writing the result as a complete model directory (model.pt, tokenizer file, manifest) that
// Encoder::load accepts, and resumable checkpoints in <output_dir>/checkpoint.
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace counterpoint {
class Encoder;
class TorchTextModel;
struct TokenBatch;
}

namespace counterpoint::training::detail {

// The parameters of `module` that require grad; InvalidArgument naming model `name` when there
// are none (the model cannot be fine-tuned).
std::vector<torch::Tensor> trainable_parameters(torch::jit::Module& module, const std::string& name);

// Whether training changed the network's weights (whole-network training) or only a head.
enum class NetworkWeights { kTrained, kUnchanged };

// Saves `encoder`'s network as it is now (in eval mode) with its head, if any, and its tokenizer file into `dir`; the
// manifest is the encoder's own with `name`, `query_prefix` and `training` (provenance, to which
// training.numerics adds the kernels that rounded it: torch_model.h's numeric_kernels). An
// unchanged network is copied byte for byte from the encoder's directory rather than serialised
// again, so the new model records the same network checksum as its base and
// Encoder::shares_network_with recognises the pair (one forward pass gives E and Es). Files are
// written atomically; IoError when the directory or a file cannot be written.
void write_model_directory(Encoder& encoder, const std::string& dir, const std::string& name,
                           const std::string& query_prefix, const nlohmann::json& training,
                           NetworkWeights network = NetworkWeights::kTrained);

// Checkpoints live in <output_dir>/checkpoint. Writes one: `write_files(dir)` fills a fresh directory, state.json (the run's progress,
// with `fingerprint` under "config") is added, and the directory then replaces the previous
// checkpoint, so an interruption at any point leaves a whole checkpoint behind. IoError when it
// cannot be written.
void write_checkpoint(const std::string& output_dir, nlohmann::json state, const nlohmann::json& fingerprint,
                      const std::function<void(const std::string& dir)>& write_files);

// Restores the checkpoint in `output_dir` (false when there is none): `accept_state` reads the
// trainer's fields of state.json, then `read_files(dir)` loads its tensors. InvalidArgument when
// the checkpoint was written under another fingerprint (another configuration or triple set);
// CorruptFile when a file fails the SHA-256 that state.json records for it (or records none);
// CorruptFile when state.json cannot be parsed or lacks a field, or a tensor file cannot be read.
bool read_checkpoint(const std::string& output_dir, const nlohmann::json& fingerprint,
                     const std::function<void(const nlohmann::json& state)>& accept_state,
                     const std::function<void(const std::string& dir)>& read_files);

// Copies saved tensors into `params` in place (no autograd); CorruptFile naming `origin` when the
// count or a shape differs.
void copy_tensors(const std::vector<torch::Tensor>& saved, const std::vector<torch::Tensor>& params,
                  const std::string& origin);

// The pooled rows model.pooled(batch) gives (head and normalisation included, differentiable), in
// the batch's order, computed over length-sorted chunks of at most `chunk` texts, each padded only
// to its own longest text. Padding is masked, so the rows are the same up to float rounding; what
// changes is the work: every layer costs per padded token (attention per padded token squared),
// and a batch of arguments of 30 to 256 tokens padded to its longest is mostly padding.
torch::Tensor pooled_in_length_chunks(TorchTextModel& model, const TokenBatch& batch, std::size_t chunk);
// The padded tokens the network processes for `batch` in such chunks (rows x padded length, summed).
std::size_t padded_tokens_in_length_chunks(const TokenBatch& batch, std::size_t chunk);

void save_optimizer(torch::optim::Optimizer& optimizer, const std::string& path);
void load_optimizer(torch::optim::Optimizer& optimizer, const std::string& path);

}  // namespace counterpoint::training::detail
