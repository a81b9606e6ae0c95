#include <torch/script.h>

#include <algorithm>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/scoring/map_verifier.h"

namespace counterpoint::scoring {

struct TorchScriptMapVerifier::Impl {
  // torch::jit::Module::forward is not const; scoring does not change the module.
  mutable torch::jit::Module module;
  std::string file_name;
  int map_size = kDefaultMapSize;
};

TorchScriptMapVerifier::TorchScriptMapVerifier(const std::string& path)
    : impl_(std::make_unique<Impl>()) {
  if (!path_exists(path)) throw FileNotFound("TorchScriptMapVerifier: no file at " + path);
  try {
    impl_->module = torch::jit::load(path, torch::kCPU);
  } catch (const c10::Error& e) {
    throw CorruptFile("TorchScriptMapVerifier: " + path + " is not a loadable TorchScript file: " +
                      e.what_without_backtrace());
  }
  impl_->module.eval();
  if (impl_->module.hasattr("map_size")) {
    const c10::IValue size = impl_->module.attr("map_size");
    if (!size.isInt() || size.toInt() <= 0 || size.toInt() > 4096) {
      throw CorruptFile("TorchScriptMapVerifier: " + path +
                        ": attribute map_size must be an integer in [1, 4096]");
    }
    impl_->map_size = static_cast<int>(size.toInt());
  }
  const auto slash = path.find_last_of('/');
  impl_->file_name = slash == std::string::npos ? path : path.substr(slash + 1);
}

TorchScriptMapVerifier::~TorchScriptMapVerifier() = default;

std::string TorchScriptMapVerifier::name() const { return "torchscript:" + impl_->file_name; }

int TorchScriptMapVerifier::map_size() const { return impl_->map_size; }

std::vector<float> TorchScriptMapVerifier::score(const std::vector<Matrix>& maps) const {
  if (maps.empty()) return {};
  const int64_t batch = static_cast<int64_t>(maps.size());
  const int64_t s = impl_->map_size;
  torch::Tensor channels = torch::zeros({batch, 3, s, s}, torch::kFloat32);
  torch::Tensor valid = torch::zeros({batch, s, s}, torch::kFloat32);
  auto channel_at = channels.accessor<float, 4>();
  auto valid_at = valid.accessor<float, 3>();
  for (int64_t b = 0; b < batch; ++b) {
    const Matrix& m = maps[static_cast<std::size_t>(b)];
    const std::string what = "TorchScriptMapVerifier: map " + std::to_string(b);
    if (m.empty() || m.cols() == 0) {
      throw InvalidArgument(what + " is empty (" + std::to_string(m.rows()) + " x " +
                            std::to_string(m.cols()) + ")");
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

  torch::Tensor output;
  {
    torch::NoGradGuard no_grad;
    try {
      output = impl_->module.forward({channels, valid}).toTensor();
    } catch (const c10::Error& e) {
      throw InvalidArgument(name() + ": forward failed: " + e.what_without_backtrace());
    }
  }
  const bool shape_ok = (output.dim() == 1 && output.size(0) == batch) ||
                        (output.dim() == 2 && output.size(0) == batch && output.size(1) == 1);
  if (!shape_ok) {
    throw InvalidArgument(name() + ": expected an output of shape [" + std::to_string(batch) +
                          "] or [" + std::to_string(batch) + ", 1], got " +
                          c10::str(output.sizes()));
  }
  output = output.reshape({batch}).to(torch::kFloat32).contiguous();
  const float* values = output.data_ptr<float>();
  return std::vector<float>(values, values + batch);
}

}  // namespace counterpoint::scoring
