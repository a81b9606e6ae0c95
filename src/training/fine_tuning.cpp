#include "fine_tuning.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/json_document.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/torch_model.h"
#include "counterpoint/encoder/torchscript_files.h"

namespace counterpoint::training::detail {

namespace fs = std::filesystem;

std::vector<torch::Tensor> trainable_parameters(torch::jit::Module& module, const std::string& name) {
  std::vector<torch::Tensor> params;
  for (const auto& p : module.parameters()) {
    if (p.requires_grad()) params.push_back(p);
  }
  if (params.empty()) {
    throw InvalidArgument("model " + name + " has no parameter that requires grad: it cannot be fine-tuned");
  }
  return params;
}

void write_model_directory(Encoder& encoder, const std::string& dir, const std::string& name,
                           const std::string& query_prefix, const nlohmann::json& training, NetworkWeights network) {
  TorchTextModel& model = encoder.model();
  const ModelManifest& base = encoder.manifest();
  try {
    fs::create_directories(dir);
  } catch (const fs::filesystem_error& e) {
    throw IoError("cannot create output directory " + dir + ": " + e.what());
  }
  model.module().eval();
  const std::string model_path = join_path(dir, "model.pt");
  if (network == NetworkWeights::kUnchanged) {
    write_file_atomic(model_path, read_file(join_path(encoder.directory(), base.model_file)));
  } else {
    try {
      model.module().save(model_path + ".partial", torchscript_writer_record());
      fs::rename(model_path + ".partial", model_path);
    } catch (const std::exception& e) {
      throw IoError("cannot write " + model_path + ": " + e.what());
    }
  }
  write_file_atomic(join_path(dir, base.tokenizer_file), read_file(join_path(encoder.directory(), base.tokenizer_file)));

  ModelManifest m = base;
  m.name = name;
  m.model_file = "model.pt";
  m.query_prefix = query_prefix;
  m.files = {{m.model_file, ""}, {m.tokenizer_file, ""}};
  m.head_file.clear();
  if (!model.head().empty()) {
    m.head_file = "head.pt";
    m.head_kind = model.head_kind();
    m.files[m.head_file] = "";
    const std::string head_path = join_path(dir, m.head_file);
    try {
      save_head(m.head_kind, model.head(), head_path + ".partial");
      fs::rename(head_path + ".partial", head_path);
    } catch (const std::exception& e) {
      throw IoError("cannot write " + head_path + ": " + e.what());
    }
  }
  m.training = training;
  const NumericKernels kernels = numeric_kernels();
  m.training["numerics"] = {{"blas", kernels.blas}, {"aten_cpu_capability", kernels.aten_cpu_capability}};
  m.save(dir);
}

namespace {
std::string checkpoint_directory(const std::string& output_dir) { return join_path(output_dir, "checkpoint"); }

constexpr const char* kStateFile = "state.json";

// SHA-256 of every file in a checkpoint directory but state.json, which records them.
nlohmann::json checkpoint_checksums(const std::string& dir) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != kStateFile) files[name] = sha256_file(entry.path().string());
  }
  return files;
}

// A checkpoint is resumed only when every file it records is there, unchanged, and nothing else
// is: a flipped byte used to be resumed silently and end with other weights.
void verify_checkpoint_files(const std::string& dir, const nlohmann::json& state) {
  if (!state.contains("files") || !state["files"].is_object()) {
    throw CorruptFile("checkpoint " + dir + " records no checksums (written by an older version of the library); "
                      "remove it or start afresh (--fresh, resume=False)");
  }
  const nlohmann::json actual = checkpoint_checksums(dir);
  for (const auto& [name, sha] : state["files"].items()) {
    if (!actual.contains(name)) throw CorruptFile("checkpoint " + dir + " lacks its file " + name);
    if (actual[name] != sha) throw CorruptFile("checkpoint file " + join_path(dir, name) + " fails its SHA-256 checksum");
  }
  for (const auto& [name, sha] : actual.items()) {
    if (!state["files"].contains(name)) throw CorruptFile("checkpoint " + dir + " holds a file it does not record: " + name);
  }
}
}  // namespace

void write_checkpoint(const std::string& output_dir, nlohmann::json state, const nlohmann::json& fingerprint,
                      const std::function<void(const std::string& dir)>& write_files) {
  const std::string final_dir = checkpoint_directory(output_dir);
  const std::string partial = final_dir + ".partial";
  try {
    fs::remove_all(partial);
    fs::create_directories(partial);
    write_files(partial);
    state["config"] = fingerprint;
    state["files"] = checkpoint_checksums(partial);
    write_file_atomic(join_path(partial, kStateFile), state.dump(1) + "\n");
    fs::remove_all(final_dir);
    fs::rename(partial, final_dir);
  } catch (const fs::filesystem_error& e) {
    throw IoError("cannot write checkpoint " + final_dir + ": " + e.what());
  } catch (const c10::Error& e) {
    throw IoError("cannot write checkpoint " + final_dir + ": " + std::string(e.what_without_backtrace()));
  }
}

bool read_checkpoint(const std::string& output_dir, const nlohmann::json& fingerprint,
                     const std::function<void(const nlohmann::json& state)>& accept_state,
                     const std::function<void(const std::string& dir)>& read_files) {
  const std::string dir = checkpoint_directory(output_dir);
  const std::string state_path = join_path(dir, kStateFile);
  if (!path_exists(state_path)) return false;
  try {
    const nlohmann::json state = read_json_document(state_path);
    if (state.at("config") != fingerprint) {
      throw InvalidArgument("checkpoint " + dir + " was made with another configuration or triple set (" +
                            state.at("config").dump() + " vs " + fingerprint.dump() +
                            "); remove it, or start afresh (--fresh, resume=False)");
    }
    verify_checkpoint_files(dir, state);
    accept_state(state);
  } catch (const nlohmann::json::exception& e) {
    throw CorruptFile(state_path + ": " + e.what());
  }
  try {
    read_files(dir);
  } catch (const c10::Error& e) {
    throw CorruptFile("cannot read checkpoint " + dir + ": " + std::string(e.what_without_backtrace()).substr(0, 300));
  }
  return true;
}

void copy_tensors(const std::vector<torch::Tensor>& saved, const std::vector<torch::Tensor>& params,
                  const std::string& origin) {
  if (saved.size() != params.size()) {
    throw CorruptFile(origin + ": holds " + std::to_string(saved.size()) + " tensors where " +
                      std::to_string(params.size()) + " are expected");
  }
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!saved[i].sizes().equals(params[i].sizes())) {
      throw CorruptFile(origin + ": tensor " + std::to_string(i) + " has another shape than the one it restores");
    }
    params[i].copy_(saved[i]);
  }
}

namespace {

// One chunk of a batch: its rows (batch positions, shortest first) and the length they are cut to.
struct LengthChunk {
  std::vector<int64_t> rows;
  int64_t longest = 1;
};

// The batch's rows ordered by token count (stable, so equal lengths keep the batch's order) and cut
// into chunks of at most `chunk`, each as long as its longest row (at least one position, as
// tokenize pads): the one plan both the network pass and the token count follow.
std::vector<LengthChunk> plan_length_chunks(const TokenBatch& batch, std::size_t chunk, const char* caller) {
  if (chunk == 0) throw InvalidArgument(std::string(caller) + ": chunk must be at least 1");
  const torch::Tensor counts = batch.attention_mask.sum(1).to(torch::kInt64).contiguous();
  const std::vector<int64_t> lengths(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel());
  std::vector<int64_t> order(lengths.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lengths[a] < lengths[b]; });
  std::vector<LengthChunk> plan;
  for (std::size_t start = 0; start < order.size(); start += chunk) {
    LengthChunk part;
    part.rows.assign(order.begin() + long(start), order.begin() + long(std::min(order.size(), start + chunk)));
    part.longest = std::max<int64_t>(1, lengths[std::size_t(part.rows.back())]);  // sorted: the last is longest
    plan.push_back(std::move(part));
  }
  return plan;
}

}  // namespace

torch::Tensor pooled_in_length_chunks(TorchTextModel& model, const TokenBatch& batch, std::size_t chunk) {
  const std::vector<LengthChunk> plan = plan_length_chunks(batch, chunk, "pooled_in_length_chunks");
  if (plan.empty()) return model.pooled(batch, true);
  std::vector<torch::Tensor> parts;
  std::vector<int64_t> inverse(std::size_t(batch.input_ids.size(0)));
  int64_t sorted_row = 0;
  for (const LengthChunk& part : plan) {
    parts.push_back(model.pooled(select_rows(batch, torch::tensor(part.rows), part.longest), true));
    for (int64_t row : part.rows) inverse[std::size_t(row)] = sorted_row++;
  }
  // Back to the batch's order: batch row r is row inverse[r] of the chunks' concatenation.
  return torch::cat(parts).index_select(0, torch::tensor(inverse));
}

std::size_t padded_tokens_in_length_chunks(const TokenBatch& batch, std::size_t chunk) {
  std::size_t total = 0;
  for (const LengthChunk& part : plan_length_chunks(batch, chunk, "padded_tokens_in_length_chunks")) {
    total += part.rows.size() * std::size_t(part.longest);
  }
  return total;
}

void save_optimizer(torch::optim::Optimizer& optimizer, const std::string& path) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  archive.save_to(path);
}

void load_optimizer(torch::optim::Optimizer& optimizer, const std::string& path) {
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  optimizer.load(archive);
}

}  // namespace counterpoint::training::detail
