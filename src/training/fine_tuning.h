// Internal to the training layer: what both trainers need to fine-tune an encoder: its trainable
// parameters, and writing the result as a complete model directory (model.pt, tokenizer file,
// manifest) that Encoder::load accepts.
#pragma once

#include <torch/script.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace counterpoint {
class Encoder;
}

namespace counterpoint::training::detail {

// The parameters of `module` that require grad; InvalidArgument naming model `name` when there
// are none (the model cannot be fine-tuned).
std::vector<torch::Tensor> trainable_parameters(torch::jit::Module& module, const std::string& name);

// Saves `encoder`'s network as it is now (in eval mode) with its tokenizer file into `dir`; the
// manifest is the encoder's own with `name`, `query_prefix` and `training` (provenance). Files
// are written atomically; IoError when the directory or a file cannot be written.
void write_model_directory(Encoder& encoder, const std::string& dir, const std::string& name,
                           const std::string& query_prefix, const nlohmann::json& training);

}  // namespace counterpoint::training::detail
