#include "fine_tuning.h"

#include <filesystem>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/torch_model.h"

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
                           const std::string& query_prefix, const nlohmann::json& training) {
  TorchTextModel& model = encoder.model();
  const ModelManifest& base = encoder.manifest();
  try {
    fs::create_directories(dir);
  } catch (const fs::filesystem_error& e) {
    throw IoError("cannot create output directory " + dir + ": " + e.what());
  }
  model.module().eval();
  const std::string model_path = join_path(dir, "model.pt");
  try {
    model.module().save(model_path + ".partial");
    fs::rename(model_path + ".partial", model_path);
  } catch (const std::exception& e) {
    throw IoError("cannot write " + model_path + ": " + e.what());
  }
  write_file_atomic(join_path(dir, base.tokenizer_file), read_file(join_path(encoder.directory(), base.tokenizer_file)));

  ModelManifest m = base;
  m.name = name;
  m.model_file = "model.pt";
  m.query_prefix = query_prefix;
  m.files = {{m.model_file, ""}, {m.tokenizer_file, ""}};
  m.training = training;
  m.save(dir);
}

}  // namespace counterpoint::training::detail
