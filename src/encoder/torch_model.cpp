#include "counterpoint/encoder/torch_model.h"

#include <torch/nn/functional/normalization.h>

#include <algorithm>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint {

namespace {

torch::jit::Module load_torchscript(const std::string& path) {
  try {
    return torch::jit::load(path, torch::kCPU);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    throw CorruptFile("cannot load TorchScript model " + path + ": " + what.substr(0, 300));
  }
}

}  // namespace

TorchTextModel::TorchTextModel(const std::string& model_dir, const ModelManifest& manifest, bool int8)
    : manifest_(manifest) {
  std::string model_file = manifest.model_file;
  if (int8) {
    model_file = "model-int8.pt";
    if (!manifest.files.count(model_file)) {
      throw InvalidArgument("model " + manifest.name + " in " + model_dir +
                            " has no int8 variant (model-int8.pt is not in its manifest)");
    }
  }
  tokenizer_ = load_tokenizer(manifest.tokenizer_kind, join_path(model_dir, manifest.tokenizer_file),
                              manifest.lowercase);
  module_ = load_torchscript(join_path(model_dir, model_file));
  module_.eval();

  // A model whose outputs disagree with its manifest must not get as far as an index.
  c10::InferenceMode guard;
  TokenBatch probe = tokenize({"probe"}, "");
  auto [states, pooled] = forward(probe);
  if (pooled.dim() != 2 || std::size_t(pooled.size(1)) != manifest.embedding_dim) {
    throw CorruptFile("model " + join_path(model_dir, model_file) + " returns pooled width " +
                      (pooled.dim() == 2 ? std::to_string(pooled.size(1)) : std::string("?")) +
                      " but its manifest says embedding_dim " + std::to_string(manifest.embedding_dim));
  }
  if (states.dim() != 3 || std::size_t(states.size(2)) != manifest.token_dim) {
    throw CorruptFile("model " + join_path(model_dir, model_file) + " returns token width " +
                      (states.dim() == 3 ? std::to_string(states.size(2)) : std::string("?")) +
                      " but its manifest says token_dim " + std::to_string(manifest.token_dim));
  }
}

TokenBatch TorchTextModel::tokenize(const std::vector<std::string>& texts, const std::string& prefix) const {
  std::vector<Encoding> encodings;
  encodings.reserve(texts.size());
  TokenBatch batch;
  std::size_t longest = 1;
  for (const auto& text : texts) {
    Encoding e = prefix.empty() ? tokenizer_->encode(text, manifest_.max_length)
                                : tokenizer_->encode(prefix + text, manifest_.max_length);
    if (e.truncated) ++batch.truncated;
    batch.tokens += e.ids.size();
    longest = std::max(longest, e.ids.size());
    encodings.push_back(std::move(e));
  }
  const auto n = static_cast<int64_t>(texts.size());
  const auto t = static_cast<int64_t>(longest);
  batch.input_ids = torch::full({n, t}, tokenizer_->pad_id(), torch::kInt64);
  batch.attention_mask = torch::zeros({n, t}, torch::kInt64);
  auto ids = batch.input_ids.accessor<int64_t, 2>();
  auto mask = batch.attention_mask.accessor<int64_t, 2>();
  for (int64_t i = 0; i < n; ++i) {
    const auto& e = encodings[std::size_t(i)];
    for (std::size_t j = 0; j < e.ids.size(); ++j) {
      ids[i][int64_t(j)] = e.ids[j];
      mask[i][int64_t(j)] = 1;
    }
  }
  return batch;
}

std::pair<torch::Tensor, torch::Tensor> TorchTextModel::forward(const TokenBatch& batch) {
  torch::jit::IValue out;
  try {
    out = module_.forward({batch.input_ids, batch.attention_mask});
  } catch (const c10::Error& e) {
    throw Error("model " + manifest_.name + " failed on a batch of shape [" +
                std::to_string(batch.input_ids.size(0)) + ", " + std::to_string(batch.input_ids.size(1)) +
                "]: " + std::string(e.what_without_backtrace()).substr(0, 300));
  }
  if (!out.isTuple() || out.toTuple()->elements().size() != 2) {
    throw CorruptFile("model " + manifest_.name +
                      " does not return (token_states, pooled) as the model format requires");
  }
  const auto& elements = out.toTuple()->elements();
  return {elements[0].toTensor(), elements[1].toTensor()};
}

torch::Tensor TorchTextModel::pooled(const TokenBatch& batch, bool normalize) {
  auto [states, pooled] = forward(batch);
  torch::Tensor result;
  switch (manifest_.pooling) {
    case Pooling::kModel:
      result = pooled;
      break;
    case Pooling::kCls:
      result = states.select(1, 0);
      break;
    case Pooling::kMean: {
      auto mask = batch.attention_mask.unsqueeze(-1).to(states.dtype());
      result = (states * mask).sum(1) / mask.sum(1).clamp_min(1.0);
      break;
    }
  }
  if (normalize) result = torch::nn::functional::normalize(
      result, torch::nn::functional::NormalizeFuncOptions().p(2).dim(1).eps(1e-12));
  return result;
}

torch::Tensor TorchTextModel::token_states(const TokenBatch& batch) {
  auto states = forward(batch).first;
  return states * batch.attention_mask.unsqueeze(-1).to(states.dtype());
}

}  // namespace counterpoint
