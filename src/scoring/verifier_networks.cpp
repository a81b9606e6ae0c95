#include "counterpoint/scoring/verifier_networks.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint::scoring {

namespace nn = torch::nn;

MapBatch make_map_batch(const std::vector<const Matrix*>& maps, int64_t map_size, const std::string& who) {
  const auto batch = static_cast<int64_t>(maps.size());
  const int64_t s = map_size;
  MapBatch out{torch::zeros({batch, 3, s, s}, torch::kFloat32), torch::zeros({batch, s, s}, torch::kFloat32)};
  auto channel_at = out.maps.accessor<float, 4>();
  auto valid_at = out.valid.accessor<float, 3>();
  for (int64_t b = 0; b < batch; ++b) {
    const Matrix& m = *maps[static_cast<std::size_t>(b)];
    const std::string what = who + ": map " + std::to_string(b);
    if (m.empty() || m.cols() == 0) {
      throw InvalidArgument(what + " is empty (" + std::to_string(m.rows()) + " x " + std::to_string(m.cols()) + ")");
    }
    require_finite(m.view(), what.c_str());
    std::vector<float> row_max(m.rows(), -std::numeric_limits<float>::infinity());
    std::vector<float> col_max(m.cols(), -std::numeric_limits<float>::infinity());
    for (std::size_t i = 0; i < m.rows(); ++i) {
      for (std::size_t j = 0; j < m.cols(); ++j) {
        row_max[i] = std::max(row_max[i], m(i, j));
        col_max[j] = std::max(col_max[j], m(i, j));
      }
    }
    const int64_t rows = std::min<int64_t>(s, static_cast<int64_t>(m.rows()));
    const int64_t cols = std::min<int64_t>(s, static_cast<int64_t>(m.cols()));
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        channel_at[b][0][i][j] = m(i, j);
        channel_at[b][1][i][j] = row_max[i];
        channel_at[b][2][i][j] = col_max[j];
        valid_at[b][i][j] = 1.0f;
      }
    }
  }
  return out;
}

std::vector<float> score_in_batches(const std::vector<const Matrix*>& maps, int64_t map_size, const std::string& who,
                                    const std::function<torch::Tensor(const MapBatch&)>& forward) {
  torch::NoGradGuard no_grad;
  std::vector<float> scores;
  scores.reserve(maps.size());
  for (std::size_t start = 0; start < maps.size(); start += kMapsPerForward) {
    const std::vector<const Matrix*> part(maps.begin() + long(start),
                                          maps.begin() + long(std::min(maps.size(), start + kMapsPerForward)));
    const torch::Tensor out = forward(make_map_batch(part, map_size, who)).to(torch::kFloat32).contiguous();
    scores.insert(scores.end(), out.data_ptr<float>(), out.data_ptr<float>() + out.numel());
  }
  return scores;
}

namespace {

// F3. The global average pool runs over the whole padded map, as in the reference.
class CnnVerifier : public VerifierNetwork {
 public:
  explicit CnnVerifier(const VerifierShape& s)
      : conv1_(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, s.width, 3).padding(1)))),
        norm1_(register_module("norm1", nn::BatchNorm2d(s.width))),
        conv2_(register_module("conv2", nn::Conv2d(nn::Conv2dOptions(s.width, 2 * s.width, 3).padding(1)))),
        norm2_(register_module("norm2", nn::BatchNorm2d(2 * s.width))),
        hidden_(register_module("hidden", nn::Linear(2 * s.width, s.width))),
        dropout_(register_module("dropout", nn::Dropout(s.dropout))),
        out_(register_module("out", nn::Linear(s.width, 1))) {}

  torch::Tensor forward(const torch::Tensor& maps, const torch::Tensor& /*valid*/) override {
    auto x = torch::max_pool2d(torch::relu(norm1_(conv1_(maps))), 2);
    x = torch::max_pool2d(torch::relu(norm2_(conv2_(x))), 2);
    x = x.mean({2, 3});
    x = out_(dropout_(torch::relu(hidden_(x))));
    return torch::tanh(x).squeeze(1);
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d norm1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d norm2_;
  nn::Linear hidden_;
  nn::Dropout dropout_;
  nn::Linear out_;
};

// F4. Patches without a single valid pair are masked as attention keys; the CLS token never is,
// so every attention row has at least one key.
class PatchTransformerVerifier : public VerifierNetwork {
 public:
  explicit PatchTransformerVerifier(const VerifierShape& s)
      : dim_(s.width),
        patch_(s.patch),
        embed_(register_module("embed", nn::Conv2d(nn::Conv2dOptions(3, s.width, s.patch).stride(s.patch)))),
        input_norm_(register_module("input_norm", nn::LayerNorm(nn::LayerNormOptions({s.width})))),
        attention_norm_(register_module("attention_norm", nn::LayerNorm(nn::LayerNormOptions({s.width})))),
        qkv_(register_module("qkv", nn::Linear(s.width, 3 * s.width))),
        attention_out_(register_module("attention_out", nn::Linear(s.width, s.width))),
        feed_forward_norm_(register_module("feed_forward_norm", nn::LayerNorm(nn::LayerNormOptions({s.width})))),
        feed_forward_in_(register_module("feed_forward_in", nn::Linear(s.width, s.feed_forward))),
        feed_forward_out_(register_module("feed_forward_out", nn::Linear(s.feed_forward, s.width))),
        head_hidden_(register_module("head_hidden", nn::Linear(s.width, s.width))),
        head_out_(register_module("head_out", nn::Linear(s.width, 1))),
        dropout_(register_module("dropout", nn::Dropout(s.dropout))) {
    const int64_t patches = int64_t(s.map_size / s.patch) * int64_t(s.map_size / s.patch);
    cls_ = register_parameter("cls", torch::randn({1, 1, s.width}) * 0.02);
    positions_ = register_parameter("positions", torch::randn({1, patches + 1, s.width}) * 0.02);
  }

  torch::Tensor forward(const torch::Tensor& maps, const torch::Tensor& valid) override {
    const int64_t batch = maps.size(0);
    auto x = embed_(maps).flatten(2).transpose(1, 2);  // [B, patches, D]
    auto patch_valid = torch::max_pool2d(valid.unsqueeze(1), patch_).flatten(1) > 0;
    x = torch::cat({cls_.expand({batch, 1, dim_}), x}, 1) + positions_;
    x = input_norm_(x);
    auto keep = torch::cat({torch::ones({batch, 1}, torch::kBool), patch_valid}, 1);

    auto qkv = qkv_(attention_norm_(x)).chunk(3, -1);
    auto weights = torch::matmul(qkv[0], qkv[1].transpose(1, 2)) / std::sqrt(double(dim_));
    weights = weights.masked_fill(keep.logical_not().unsqueeze(1), -std::numeric_limits<float>::infinity());
    x = x + dropout_(attention_out_(torch::matmul(torch::softmax(weights, -1), qkv[2])));
    x = x + dropout_(feed_forward_out_(torch::gelu(feed_forward_in_(feed_forward_norm_(x)))));

    auto cls = x.select(1, 0);
    return torch::tanh(head_out_(dropout_(torch::gelu(head_hidden_(cls))))).squeeze(1);
  }

 private:
  int64_t dim_;
  int64_t patch_;
  nn::Conv2d embed_;
  nn::LayerNorm input_norm_, attention_norm_;
  nn::Linear qkv_, attention_out_;
  nn::LayerNorm feed_forward_norm_;
  nn::Linear feed_forward_in_, feed_forward_out_, head_hidden_, head_out_;
  nn::Dropout dropout_;
  torch::Tensor cls_, positions_;
};

}  // namespace

std::shared_ptr<VerifierNetwork> make_verifier_network(const VerifierShape& shape) {
  validate(shape);
  if (shape.architecture == VerifierArchitecture::kCnn) return std::make_shared<CnnVerifier>(shape);
  return std::make_shared<PatchTransformerVerifier>(shape);
}

void save_verifier_directory(const std::string& directory, VerifierNetwork& network,
                             const VerifierShape& shape, const std::string& training_json) {
  namespace fs = std::filesystem;
  nlohmann::json training;
  try {
    training = nlohmann::json::parse(training_json);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(std::string("save_verifier_directory: training is not JSON: ") + e.what());
  }
  const std::string weights = join_path(directory, "weights.pt");
  try {
    fs::create_directories(directory);
    torch::serialize::OutputArchive archive;
    network.save(archive);
    archive.save_to(weights + ".partial");
    fs::rename(weights + ".partial", weights);
  } catch (const std::exception& e) {
    throw IoError("cannot write " + weights + ": " + e.what());
  }
  const nlohmann::json manifest = {
      {"format", BuiltinMapVerifier::kFormat},
      {"version", BuiltinMapVerifier::kFormatVersion},
      {"architecture", to_string(shape.architecture)},
      {"map_size", shape.map_size},
      {"width", shape.width},
      {"patch", shape.patch},
      {"feed_forward", shape.feed_forward},
      {"dropout", shape.dropout},
      {"weights", {{"file", "weights.pt"}, {"sha256", sha256_file(weights)}}},
      {"training", training},
  };
  write_file_atomic(join_path(directory, "verifier.json"), manifest.dump(2) + "\n");
}

}  // namespace counterpoint::scoring
