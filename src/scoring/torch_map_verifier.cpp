#include <torch/script.h>

#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/scoring/map_verifier.h"
#include "counterpoint/scoring/verifier_networks.h"

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
  std::vector<const Matrix*> pointers;
  for (const Matrix& m : maps) pointers.push_back(&m);
  return score_in_batches(pointers, impl_->map_size, "TorchScriptMapVerifier", [&](const MapBatch& input) {
    const int64_t batch = input.maps.size(0);
    torch::Tensor output;
    try {
      output = impl_->module.forward({input.maps, input.valid}).toTensor();
    } catch (const c10::Error& e) {
      throw InvalidArgument(name() + ": forward failed: " + e.what_without_backtrace());
    }
    const bool shape_ok = (output.dim() == 1 && output.size(0) == batch) ||
                          (output.dim() == 2 && output.size(0) == batch && output.size(1) == 1);
    if (!shape_ok) {
      throw InvalidArgument(name() + ": expected an output of shape [" + std::to_string(batch) + "] or [" +
                            std::to_string(batch) + ", 1], got " + c10::str(output.sizes()));
    }
    return output.reshape({batch});
  });
}

}  // namespace counterpoint::scoring
