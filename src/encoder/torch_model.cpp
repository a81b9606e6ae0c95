#include "counterpoint/encoder/torch_model.h"

#include <torch/nn/functional/normalization.h>
#include <torch/serialize.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/torchscript_files.h"

namespace counterpoint {

namespace {

// A network saved by another torch may use what this libtorch cannot read: the refusal names both.
[[noreturn]] void refuse_torchscript(const std::string& path, const std::string& what) {
  const std::string writer = torchscript_writer(path);
  std::string versions = " with libtorch " + std::string(linked_torch_version());
  if (!writer.empty() && writer != linked_torch_version()) {
    versions += " (it was saved by torch " + writer + "; save it again under torch " + linked_torch_version() +
                ", or install counterpoint against torch " + writer + ")";
  }
  throw CorruptFile("cannot load TorchScript model " + path + versions + ": " + what.substr(0, 300));
}

torch::jit::Module load_torchscript(const std::string& path) {
  try {
    return torch::jit::load(path, torch::kCPU);
  } catch (const c10::Error& e) {
    refuse_torchscript(path, e.what_without_backtrace());
  } catch (const std::exception& e) {  // the TorchScript compiler's ErrorReport: code it cannot compile
    refuse_torchscript(path, e.what());
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
                              manifest.lowercase, manifest.specials);
  network_file_ = model_file;
  model_path_ = join_path(model_dir, model_file);
  module_ = load_torchscript(model_path_);
  module_.eval();
  // A BERT-family network records its position table's size; a manifest asking for longer inputs
  // would load and fail on the first long text, so it is refused here.
  if (module_.hasattr("max_positions") && module_.attr("max_positions").isInt()) {
    const int64_t positions = module_.attr("max_positions").toInt();
    if (positions > 0 && manifest.max_length > std::size_t(positions)) {
      throw CorruptFile("model " + manifest.name + " in " + model_dir + ": its manifest's max_length " +
                        std::to_string(manifest.max_length) + " exceeds the " + std::to_string(positions) +
                        " positions its network embeds (set max_length to at most " + std::to_string(positions) +
                        ")");
    }
  }

  // Loaded outside inference mode, so that training can back-propagate into it.
  std::vector<torch::Tensor> head;
  const std::string head_path = join_path(model_dir, manifest.head_file);
  if (!manifest.head_file.empty()) {
    try {
      head = load_head(head_path);
    } catch (const c10::Error& e) {
      throw CorruptFile("cannot load the head " + head_path + ": " + std::string(e.what_without_backtrace()).substr(0, 300));
    }
  }

  // A model whose outputs disagree with its manifest must not get as far as an index. A network
  // that fails on the probes (another model's network, whose embedding table rejects this
  // tokenizer's ids, or a forward of another signature) is a directory whose files do not fit
  // together, not a text the network could not take.
  const std::string does_not_fit = "model " + manifest.name + ": its network " + model_path_ +
                                   " does not fit its manifest " + join_path(model_dir, "manifest.json") + ": ";
  const auto probe_forward = [&](const TokenBatch& batch, const std::string& what_failed) {
    try {
      return forward(batch);
    } catch (const CorruptFile&) {
      throw;
    } catch (const Error& e) {
      throw CorruptFile(does_not_fit + what_failed + " (" + e.what() + ")");
    }
  };
  c10::InferenceMode guard;
  TokenBatch probe = tokenize({"probe"}, "");
  auto [states, pooled] = probe_forward(probe, "it fails on the text 'probe'");
  if (!head.empty()) {
    const torch::Tensor features = pool(states, pooled, probe.attention_mask);
    if (features.dim() != 2) {
      throw CorruptFile("model " + join_path(model_dir, model_file) + " returns a pooled output of " +
                        std::to_string(features.dim()) + " dimensions, not [batch, width]");
    }
    pooled_width_ = std::size_t(features.size(1));
    try {
      set_head(manifest.head_kind, std::move(head));
    } catch (const InvalidArgument& e) {
      throw CorruptFile(head_path + ": " + e.what());
    }
  } else if (pooled.dim() != 2 || std::size_t(pooled.size(1)) != manifest.embedding_dim) {
    throw CorruptFile("model " + join_path(model_dir, model_file) + " returns pooled width " +
                      (pooled.dim() == 2 ? std::to_string(pooled.size(1)) : std::string("?")) +
                      " but its manifest says embedding_dim " + std::to_string(manifest.embedding_dim));
  }
  if (states.dim() != 3 || std::size_t(states.size(2)) != manifest.token_dim) {
    throw CorruptFile("model " + join_path(model_dir, model_file) + " returns token width " +
                      (states.dim() == 3 ? std::to_string(states.size(2)) : std::string("?")) +
                      " but its manifest says token_dim " + std::to_string(manifest.token_dim));
  }
  if (pooled_width_ == 0) pooled_width_ = std::size_t(pool(states, pooled, probe.attention_mask).size(1));
  raw_pooled_width_ = pooled.size(1);

  // A vocabulary longer than the network's embedding table would load and fail on the first text
  // that uses a late piece: the largest id is fed once here.
  if (tokenizer_->vocab_size() > 0) {
    TokenBatch last_id;
    last_id.input_ids = torch::full({1, 1}, int64_t(tokenizer_->vocab_size() - 1), torch::kInt64);
    last_id.attention_mask = torch::ones({1, 1}, torch::kInt64);
    probe_forward(last_id, "its tokenizer has " + std::to_string(tokenizer_->vocab_size()) +
                               " pieces but the network cannot embed id " + std::to_string(tokenizer_->vocab_size() - 1));
  }
}

namespace {

std::string describe(const torch::Tensor& t) {
  std::string out = "[";
  for (int64_t d = 0; d < t.dim(); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
  out += "] " + std::string(c10::toString(t.scalar_type()));
  if (t.layout() != torch::kStrided) out += " sparse";
  if (!t.device().is_cpu()) out += " on " + t.device().str();
  return out;
}

// What the rest of the encoder can compute with: a dense float32 or float64 tensor in CPU memory.
// Half, sparse or meta outputs would otherwise fail deep in libtorch with its stack trace.
bool usable(const torch::Tensor& t) {
  return t.defined() && t.layout() == torch::kStrided && t.device().is_cpu() &&
         (t.scalar_type() == torch::kFloat32 || t.scalar_type() == torch::kFloat64);
}

}  // namespace

void TorchTextModel::check_outputs(const TokenBatch& batch, const torch::Tensor& states,
                                   const torch::Tensor& pooled) const {
  const int64_t rows = batch.input_ids.size(0), length = batch.input_ids.size(1);
  const bool probed = raw_pooled_width_ >= 0;
  const std::string batch_shape = "for a batch of shape [" + std::to_string(rows) + ", " + std::to_string(length) + "]";
  if (!usable(states) || states.dim() != 3 || states.size(0) != rows ||
      states.size(1) != length || (probed && states.size(2) != int64_t(manifest_.token_dim))) {
    throw CorruptFile("model " + manifest_.name + " (" + model_path_ + ") returned token_states " +
                      (states.defined() ? describe(states) : std::string("undefined")) + " " + batch_shape +
                      "; expected [" + std::to_string(rows) + ", " + std::to_string(length) + ", " +
                      std::to_string(manifest_.token_dim) + "] float (dense, on the CPU)");
  }
  if (!usable(pooled) || pooled.dim() != 2 || pooled.size(0) != rows ||
      (probed && pooled.size(1) != raw_pooled_width_)) {
    throw CorruptFile("model " + manifest_.name + " (" + model_path_ + ") returned pooled " +
                      (pooled.defined() ? describe(pooled) : std::string("undefined")) + " " + batch_shape +
                      "; expected [" + std::to_string(rows) + ", " +
                      (probed ? std::to_string(raw_pooled_width_) : std::string("width")) +
                      "] float (dense, on the CPU)");
  }
}

namespace {
std::string shape_of(const torch::Tensor& t) {
  if (!t.defined()) return "undefined";
  std::string shape;
  for (int64_t d = 0; d < t.dim(); ++d) shape += (d ? " x " : "") + std::to_string(t.size(d));
  return t.dim() == 0 ? "a scalar" : shape;
}
}  // namespace

void TorchTextModel::set_head(HeadKind kind, std::vector<torch::Tensor> head) {
  const int64_t out = int64_t(manifest_.embedding_dim), in = int64_t(pooled_width_);
  // The hidden width of an MLP head is whatever its first layer says; the rest must agree.
  const int64_t hidden = kind == HeadKind::kMlp && head.size() > 1 && head[1].defined() && head[1].dim() == 2
                             ? head[1].size(0) : 0;
  const std::vector<std::vector<int64_t>> expected =
      kind == HeadKind::kLinear ? std::vector<std::vector<int64_t>>{{out, in}}
                                : std::vector<std::vector<int64_t>>{{out, in}, {hidden, in}, {hidden}, {out, hidden}, {out}};
  const char* layout = kind == HeadKind::kLinear
                           ? "a float32 matrix W [embedding_dim x pooled width]"
                           : "the float32 tensors W [embedding_dim x pooled width], W1 [hidden x pooled width], b1 "
                             "[hidden], W2 [embedding_dim x hidden], b2 [embedding_dim]";
  std::string problem;
  if (head.size() != expected.size()) {
    problem = std::to_string(head.size()) + " tensors (does the manifest's head_kind match the head file?)";
  } else if (kind == HeadKind::kMlp && hidden <= 0) {
    problem = "W1 of shape " + shape_of(head[1]);
  } else {
    static const char* const names[] = {"W", "W1", "b1", "W2", "b2"};
    for (std::size_t i = 0; i < head.size() && problem.empty(); ++i) {
      if (!head[i].defined() || head[i].sizes().vec() != expected[i]) {
        problem = std::string(names[i]) + " of shape " + shape_of(head[i]);
      } else if (head[i].scalar_type() != torch::kFloat32) {
        problem = std::string(names[i]) + " of type " + c10::toString(head[i].scalar_type());
      }
    }
  }
  if (!problem.empty()) {
    throw InvalidArgument("a " + to_string(kind) + " head of model " + manifest_.name + " must be " + layout +
                          " (here " + std::to_string(out) + " x " + std::to_string(in) + "), not " + problem);
  }
  head_ = std::move(head);
  manifest_.head_kind = kind;
}

std::vector<torch::Tensor> load_head(const std::string& path) {
  // A lone tensor is saved under the key a one-element list uses, so reading every file as a list
  // lets set_head() see how many tensors it really holds, whatever the manifest's head_kind says.
  std::vector<torch::Tensor> head;
  torch::load(head, path);
  // Any TorchScript archive reads as a list: one without tensors under the list's keys (the
  // network's own model.pt, a scripted module) is an empty one, which a model would take for
  // "no head" and encode as its base network.
  if (head.empty()) {
    throw CorruptFile("the head " + path + " holds no tensors (a head file is torch.save of the tensor W, or of "
                      "the list W, W1, b1, W2, b2)");
  }
  return head;
}

void save_head(HeadKind kind, const std::vector<torch::Tensor>& head, const std::string& path) {
  std::vector<torch::Tensor> tensors;
  for (const auto& t : head) tensors.push_back(t.detach());
  if (kind == HeadKind::kLinear && tensors.size() == 1) {
    torch::save(tensors.front(), path);
  } else {
    torch::save(tensors, path);
  }
}

std::vector<torch::Tensor> starting_head(HeadKind kind, int64_t embedding_dim, int64_t pooled_width, int64_t hidden) {
  std::vector<torch::Tensor> head{torch::eye(embedding_dim, pooled_width)};
  if (kind == HeadKind::kMlp) {
    const double bound = 1.0 / std::sqrt(double(pooled_width));
    head.push_back(torch::empty({hidden, pooled_width}).uniform_(-bound, bound));
    head.push_back(torch::empty({hidden}).uniform_(-bound, bound));
    head.push_back(torch::zeros({embedding_dim, hidden}));
    head.push_back(torch::zeros({embedding_dim}));
  }
  return head;
}

TokenBatch select_rows(const TokenBatch& batch, const torch::Tensor& rows, int64_t width) {
  TokenBatch part;
  part.input_ids = batch.input_ids.index_select(0, rows).narrow(1, 0, width).contiguous();
  part.attention_mask = batch.attention_mask.index_select(0, rows).narrow(1, 0, width).contiguous();
  return part;
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
  } catch (const std::exception& e) {  // torch::jit::JITException: an error raised inside the script
    // The interpreter's report ends with the line the script raised, then newlines.
    const std::string what = e.what();
    const auto end = what.find_last_not_of('\n');
    const auto newline = end == std::string::npos ? std::string::npos : what.rfind('\n', end);
    const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
    const std::size_t length = end == std::string::npos ? 0 : end + 1 - begin;
    throw Error("model " + manifest_.name + " failed on a batch of shape [" +
                std::to_string(batch.input_ids.size(0)) + ", " + std::to_string(batch.input_ids.size(1)) +
                "]: " + what.substr(begin, std::min<std::size_t>(length, 300)));
  }
  if (!out.isTuple() || out.toTuple()->elements().size() != 2) {
    throw CorruptFile("model " + manifest_.name +
                      " does not return (token_states, pooled) as the model format requires");
  }
  const auto& elements = out.toTuple()->elements();
  if (!elements[0].isTensor() || !elements[1].isTensor()) {
    throw CorruptFile("model " + manifest_.name + " (" + model_path_ +
                      ") does not return two tensors (token_states, pooled) as the model format requires");
  }
  torch::Tensor states = elements[0].toTensor(), pooled = elements[1].toTensor();
  check_outputs(batch, states, pooled);
  return {states, pooled};
}

torch::Tensor TorchTextModel::pooled(const TokenBatch& batch, bool normalize) {
  return apply_head(pooled_features(batch), normalize);
}

torch::Tensor TorchTextModel::apply_head(const torch::Tensor& features, bool normalize) const {
  torch::Tensor result = features;
  if (!head_.empty()) {
    const auto weight = [&](std::size_t i) { return head_[i].to(features.dtype()); };
    result = features.matmul(weight(0).t());
    if (manifest_.head_kind == HeadKind::kMlp) {
      result = result + torch::gelu(features.matmul(weight(1).t()) + weight(2)).matmul(weight(3).t()) + weight(4);
    }
  }
  return normalize ? l2_normalize(result, 1) : result;
}

torch::Tensor l2_normalize(const torch::Tensor& vectors, int64_t dim) {
  return torch::nn::functional::normalize(vectors,
                                          torch::nn::functional::NormalizeFuncOptions().p(2).dim(dim).eps(1e-12));
}

torch::Tensor TorchTextModel::pooled_features(const TokenBatch& batch) {
  auto [states, pooled] = forward(batch);
  return pool(states, pooled, batch.attention_mask);
}

torch::Tensor TorchTextModel::pool(const torch::Tensor& states, const torch::Tensor& pooled,
                                   const torch::Tensor& attention_mask) const {
  torch::Tensor result;
  switch (manifest_.pooling) {
    case Pooling::kModel:
      result = pooled;
      break;
    case Pooling::kCls:
      result = states.select(1, 0);
      break;
    case Pooling::kMean: {
      auto mask = attention_mask.unsqueeze(-1).to(states.dtype());
      result = (states * mask).sum(1) / mask.sum(1).clamp_min(1.0);
      break;
    }
  }
  return result;
}

torch::Tensor TorchTextModel::token_states(const TokenBatch& batch) {
  auto states = forward(batch).first;
  return states * batch.attention_mask.unsqueeze(-1).to(states.dtype());
}

void* openblas_function(const char* name) {
  static void* const handle = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);  // loaded by libtorch, or nullptr
  return handle ? dlsym(handle, name) : nullptr;
}

namespace {
// Read when the library loads: libtorch reads the variable once, at its first kernel call, so a
// value set later in the process would not be the one its kernels run under.
const std::string kAtenCpuCapabilityAtLoad = [] {
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  return std::string(capability && *capability ? capability : "auto");
}();
}  // namespace

NumericKernels numeric_kernels() {
  NumericKernels kernels;
  using GetConfig = char* (*)();
  if (at::hasMKL()) {
    // libtorch's own BLAS; an OpenBLAS in the process then serves FAISS, not the encoder.
    kernels.blas = "MKL (linked into libtorch)";
  } else if (auto get_config = reinterpret_cast<GetConfig>(openblas_function("openblas_get_config"))) {
    kernels.blas = get_config();
  }
  kernels.aten_cpu_capability = kAtenCpuCapabilityAtLoad;
  return kernels;
}

}  // namespace counterpoint
