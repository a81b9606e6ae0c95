// counterpoint/encoder/torch_model.h: the libtorch side of an encoder, for code that needs tensors
// (the Encoder itself and the training layer, which back-propagates through the same network).
// The TorchScript contract every model directory satisfies:
//   forward(input_ids: int64 [B, T], attention_mask: int64 [B, T]) -> (token_states float [B, T, H],
//                                                                      pooled float [B, D])
// Rows are right-padded with the tokenizer's pad id and mask 0. A manifest head_file adds a head
// on the pooled embedding (before normalisation; manifest.h's HeadKind), kept here beside the
// network.
#pragma once

#include <torch/script.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "counterpoint/encoder/manifest.h"
#include "counterpoint/text/tokenizer.h"

namespace counterpoint {

struct TokenBatch {
  torch::Tensor input_ids;       // int64 [B, T]
  torch::Tensor attention_mask;  // int64 [B, T]
  std::size_t truncated = 0;
  std::size_t tokens = 0;
};

// Rows `rows` (int64 indices) of `batch`, cut to the first `width` positions: a smaller pass padded
// to its own longest when `width` is that longest. truncated and tokens stay with the whole batch.
TokenBatch select_rows(const TokenBatch& batch, const torch::Tensor& rows, int64_t width);

// The one reader and writer of head files: a linear head is the single tensor W, an MLP head
// the tensor list. The reader returns every tensor the file holds (c10::Error when it is no
// archive, CorruptFile when the archive holds no tensors); set_head checks their count and shapes
// against the manifest's head_kind.
std::vector<torch::Tensor> load_head(const std::string& path);
void save_head(HeadKind kind, const std::vector<torch::Tensor>& head, const std::string& path);

// A head of `kind` that maps a pooled vector of `pooled_width` to itself when embedding_dim ==
// pooled_width: W the identity, and for kMlp a hidden layer of `hidden` units initialised as
// torch.nn.Linear does (uniform in +-1/sqrt(fan in), from torch's generator) under a zero output
// layer. Training from it starts at exactly the base model's embeddings.
std::vector<torch::Tensor> starting_head(HeadKind kind, int64_t embedding_dim, int64_t pooled_width, int64_t hidden);

// `vectors` divided by their L2 norms along `dim` (a zero vector stays zero): the one normalisation
// of pooled embeddings and token states. A norm that overflows divides its vector to zeros: the
// encoder checks its outputs for that first.
torch::Tensor l2_normalize(const torch::Tensor& vectors, int64_t dim);

// A function of the OpenBLAS that libtorch loaded (Debian's libblas.so.3 is OpenBLAS), nullptr
// under another BLAS.
void* openblas_function(const char* name);

// Which CPU kernels libtorch's arithmetic runs on in this process, as a trained model's manifest
// records it (training.numerics). Training is bit-reproducible under the same kernels and command
// only: on SICK the same seeded whole-network command gave byte-identical weights twice on one
// machine and dev figures 0.0038 apart under ATEN_CPU_CAPABILITY=avx2 OPENBLAS_CORETYPE=Zen there.
struct NumericKernels {
  std::string blas;                 // openblas_get_config(), which names the core; "" under another BLAS
  std::string aten_cpu_capability;  // $ATEN_CPU_CAPABILITY when the library loaded, or "auto" (libtorch picks by CPU)
};
NumericKernels numeric_kernels();

class TorchTextModel {
 public:
  TorchTextModel(const std::string& model_dir, const ModelManifest& manifest, bool int8);

  // Tokenises `texts` (prefix prepended) and pads them to the longest in the batch.
  TokenBatch tokenize(const std::vector<std::string>& texts, const std::string& prefix) const;
  // Runs the network; pooled output follows the manifest's pooling, L2-normalised when
  // `normalize`. Differentiable when called outside inference mode with training enabled.
  torch::Tensor pooled(const TokenBatch& batch, bool normalize = true);
  // The two halves of pooled(): the pooled vector before the head, and the head (when there is
  // one) and normalisation applied to such vectors. Training a head alone computes the first once.
  torch::Tensor pooled_features(const TokenBatch& batch);
  torch::Tensor apply_head(const torch::Tensor& features, bool normalize = true) const;
  // The head's tensors in head_kind()'s layout (manifest.h), empty when the model has none.
  const std::vector<torch::Tensor>& head() const { return head_; }
  HeadKind head_kind() const { return manifest_.head_kind; }
  // Installs a head, e.g. starting_head()'s, which a head-only training starts from;
  // InvalidArgument unless the tensors are float32 in `kind`'s layout for this network's widths.
  void set_head(HeadKind kind, std::vector<torch::Tensor> head);
  std::size_t pooled_width() const { return pooled_width_; }
  // Token states of the last layer, padded positions zero, [B, T, H].
  torch::Tensor token_states(const TokenBatch& batch);

  torch::jit::Module& module() { return module_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ModelManifest& manifest() const { return manifest_; }
  // Serialises forward calls when several threads share one encoder.
  std::mutex& mutex() const { return mutex_; }
  // The network file loaded (the manifest's model_file, or model-int8.pt), relative to the model
  // directory.
  const std::string& network_file() const { return network_file_; }

 private:
  std::pair<torch::Tensor, torch::Tensor> forward(const TokenBatch& batch);
  // The manifest's pooling of one forward pass's outputs, before the head.
  torch::Tensor pool(const torch::Tensor& states, const torch::Tensor& pooled, const torch::Tensor& attention_mask) const;

  ModelManifest manifest_;
  std::unique_ptr<Tokenizer> tokenizer_;
  torch::jit::Module module_;
  std::vector<torch::Tensor> head_;
  // A model file is input: every forward's outputs are checked against the batch and against the
  // widths the load-time probe established, so a network whose output shape depends on the batch
  // ends in CorruptFile instead of a read past a tensor's end.
  void check_outputs(const TokenBatch& batch, const torch::Tensor& states, const torch::Tensor& pooled) const;
  std::string model_path_;
  std::size_t pooled_width_ = 0;  // width of pooled_features()
  int64_t raw_pooled_width_ = -1;  // width of the network's own pooled output; -1 until probed
  mutable std::mutex mutex_;
  std::string network_file_;
};

}  // namespace counterpoint
