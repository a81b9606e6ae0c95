#include "counterpoint/scoring/verifier_networks.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/core/json_document.h"

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

MapBatch make_map_batch(const torch::Tensor& query_tokens, const torch::Tensor& query_lengths,
                        const torch::Tensor& candidate_tokens, const torch::Tensor& candidate_lengths,
                        const torch::Tensor& query_index, const torch::Tensor& candidate_index, int64_t map_size,
                        const std::string& who) {
  if (query_tokens.dim() != 3 || candidate_tokens.dim() != 3 || query_tokens.size(2) != candidate_tokens.size(2)) {
    throw InvalidArgument(who + ": token tensors must be [N, T, H] of one width H");
  }
  if (query_lengths.numel() != query_tokens.size(0) || candidate_lengths.numel() != candidate_tokens.size(0)) {
    throw InvalidArgument(who + ": one length per text is needed");
  }
  if (query_index.numel() != candidate_index.numel()) {
    throw InvalidArgument(who + ": query_index and candidate_index differ in length");
  }
  if ((query_lengths.numel() > 0 && query_lengths.min().item<int64_t>() < 1) ||
      (candidate_lengths.numel() > 0 && candidate_lengths.min().item<int64_t>() < 1)) {
    throw InvalidArgument(who + ": a text has no token, so its map is empty");
  }
  const torch::Tensor queries = query_tokens.index_select(0, query_index);
  const torch::Tensor candidates = candidate_tokens.index_select(0, candidate_index);
  const torch::Tensor m = torch::bmm(queries, candidates.transpose(1, 2));  // [P, T, U]
  if (!torch::isfinite(m).all().item<bool>()) throw InvalidArgument(who + ": a token map holds NaN or Inf");
  const int64_t t = m.size(1), u = m.size(2);
  const auto positions = [](int64_t n) { return torch::arange(n, torch::kLong).unsqueeze(0); };
  const torch::Tensor rows_ok = positions(t) < query_lengths.index_select(0, query_index).unsqueeze(1);
  const torch::Tensor cols_ok = positions(u) < candidate_lengths.index_select(0, candidate_index).unsqueeze(1);
  const torch::Tensor invalid = ~(rows_ok.unsqueeze(2) & cols_ok.unsqueeze(1));
  const torch::Tensor masked = m.masked_fill(invalid, -std::numeric_limits<float>::infinity());
  const torch::Tensor row_max = std::get<0>(masked.max(2)).unsqueeze(2).expand({-1, t, u});
  const torch::Tensor col_max = std::get<0>(masked.max(1)).unsqueeze(1).expand({-1, t, u});
  // masked_fill rather than a product with the mask: the maxima are -inf outside the map.
  torch::Tensor maps = torch::stack({m.masked_fill(invalid, 0.0f), row_max.masked_fill(invalid, 0.0f),
                                     col_max.masked_fill(invalid, 0.0f)},
                                    1);
  torch::Tensor valid = (~invalid).to(torch::kFloat32);
  const int64_t s = map_size, rows = std::min(s, t), cols = std::min(s, u);
  maps = torch::constant_pad_nd(maps.slice(2, 0, rows).slice(3, 0, cols), {0, s - cols, 0, s - rows});
  valid = torch::constant_pad_nd(valid.slice(1, 0, rows).slice(2, 0, cols), {0, s - cols, 0, s - rows});
  return {maps, valid};
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
    training = parse_json_document(training_json, "training");
  } catch (const CorruptFile& e) {
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
