#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/json_document.h"
#include "counterpoint/core/files.h"
#include "counterpoint/scoring/map_verifier.h"
#include "counterpoint/scoring/verifier_networks.h"

namespace counterpoint::scoring {

VerifierArchitecture parse_verifier_architecture(const std::string& name) {
  if (name == "cnn") return VerifierArchitecture::kCnn;
  if (name == "transformer") return VerifierArchitecture::kPatchTransformer;
  throw InvalidArgument("unknown verifier architecture '" + name + "' (expected cnn or transformer)");
}

std::string to_string(VerifierArchitecture architecture) {
  return architecture == VerifierArchitecture::kCnn ? "cnn" : "transformer";
}

void validate(const VerifierShape& s) {
  const auto in_range = [](int value, int low, int high, const char* what) {
    if (value < low || value > high) {
      throw InvalidArgument(std::string("VerifierShape.") + what + " is " + std::to_string(value) +
                            ", expected [" + std::to_string(low) + ", " + std::to_string(high) + "]");
    }
  };
  in_range(s.map_size, 4, 1024, "map_size");
  in_range(s.width, 1, 4096, "width");
  if (!(s.dropout >= 0.0 && s.dropout < 1.0)) {
    throw InvalidArgument("VerifierShape.dropout must be in [0, 1), got " + std::to_string(s.dropout));
  }
  if (s.architecture == VerifierArchitecture::kPatchTransformer) {
    in_range(s.patch, 1, s.map_size, "patch");
    in_range(s.feed_forward, 1, 65536, "feed_forward");
    if (s.map_size % s.patch != 0) {
      throw InvalidArgument("VerifierShape.patch " + std::to_string(s.patch) + " does not divide map_size " +
                            std::to_string(s.map_size));
    }
  }
}

struct BuiltinMapVerifier::Impl {
  std::shared_ptr<VerifierNetwork> network;
  VerifierShape shape;
  std::string name;
};

BuiltinMapVerifier::BuiltinMapVerifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BuiltinMapVerifier::~BuiltinMapVerifier() = default;

std::shared_ptr<BuiltinMapVerifier> BuiltinMapVerifier::load(const std::string& directory) {
  const std::string manifest_path = join_path(directory, "verifier.json");
  if (!path_exists(manifest_path)) throw FileNotFound("BuiltinMapVerifier: no verifier.json in " + directory);
  auto impl = std::make_unique<Impl>();
  std::string weights_file, weights_sha;
  try {
    const auto j = read_json_document(manifest_path);
    if (j.at("format") != kFormat) {
      throw CorruptFile(manifest_path + ": format is " + j.at("format").dump() + ", expected \"" + kFormat + "\"");
    }
    if (j.at("version") != kFormatVersion) {
      throw CorruptFile(manifest_path + ": version " + j.at("version").dump() + " is not supported (this build reads " +
                        std::to_string(kFormatVersion) + ")");
    }
    VerifierShape& s = impl->shape;
    s.architecture = parse_verifier_architecture(j.at("architecture").get<std::string>());
    s.map_size = j.at("map_size").get<int>();
    s.width = j.at("width").get<int>();
    s.patch = j.at("patch").get<int>();
    s.feed_forward = j.at("feed_forward").get<int>();
    s.dropout = j.at("dropout").get<double>();
    validate(s);
    weights_file = j.at("weights").at("file").get<std::string>();
    weights_sha = j.at("weights").at("sha256").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw CorruptFile(manifest_path + ": " + e.what());
  } catch (const InvalidArgument& e) {
    throw CorruptFile(manifest_path + ": " + e.what());
  }
  if (weights_file.empty() || weights_file.find('/') != std::string::npos) {
    throw CorruptFile(manifest_path + ": weights file must be a plain name inside the directory");
  }
  const std::string weights = join_path(directory, weights_file);
  if (!path_exists(weights)) throw FileNotFound("BuiltinMapVerifier: " + weights + " is missing");
  if (sha256_file(weights) != weights_sha) {
    throw CorruptFile(weights + ": checksum does not match verifier.json (damaged or replaced)");
  }
  impl->network = make_verifier_network(impl->shape);
  // Module::load resizes tensors to whatever the archive holds, so the shapes are checked here.
  std::map<std::string, std::vector<int64_t>> expected;
  for (const auto& p : impl->network->named_parameters()) expected[p.key()] = p.value().sizes().vec();
  for (const auto& b : impl->network->named_buffers()) expected[b.key()] = b.value().sizes().vec();
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(weights);
    impl->network->load(archive);
  } catch (const c10::Error& e) {
    throw CorruptFile(weights + ": not weights of a " + to_string(impl->shape.architecture) +
                      " verifier of this shape: " + std::string(e.what_without_backtrace()).substr(0, 300));
  }
  const auto check = [&](const std::string& name, const torch::Tensor& tensor) {
    if (tensor.sizes().vec() != expected.at(name)) {
      throw CorruptFile(weights + ": tensor '" + name + "' has shape " + c10::str(tensor.sizes()) +
                        ", verifier.json's shape needs " + c10::str(c10::IntArrayRef(expected.at(name))));
    }
  };
  for (const auto& p : impl->network->named_parameters()) check(p.key(), p.value());
  for (const auto& b : impl->network->named_buffers()) check(b.key(), b.value());
  impl->network->eval();
  const std::string trimmed = directory.substr(0, directory.find_last_not_of('/') + 1);
  impl->name = to_string(impl->shape.architecture) + ":" + std::filesystem::path(trimmed).filename().string();
  return std::shared_ptr<BuiltinMapVerifier>(new BuiltinMapVerifier(std::move(impl)));
}

std::string BuiltinMapVerifier::name() const { return impl_->name; }

const VerifierShape& BuiltinMapVerifier::shape() const { return impl_->shape; }

std::vector<float> BuiltinMapVerifier::score(const std::vector<Matrix>& maps) const {
  if (maps.empty()) return {};
  std::vector<const Matrix*> pointers;
  for (const Matrix& m : maps) pointers.push_back(&m);
  return score_in_batches(pointers, impl_->shape.map_size, name(),
                          [&](const MapBatch& batch) { return impl_->network->forward(batch.maps, batch.valid); });
}

std::shared_ptr<const MapVerifier> load_map_verifier(const std::string& path) {
  if (!path_exists(path)) throw FileNotFound("no map verifier at " + path);
  if (std::filesystem::is_directory(path)) return BuiltinMapVerifier::load(path);
  return std::make_shared<TorchScriptMapVerifier>(path);
}

}  // namespace counterpoint::scoring
