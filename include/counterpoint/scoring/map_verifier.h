// counterpoint/scoring/map_verifier.h: learned verifiers that score token cosine maps.
// Owns the MapVerifier interface (models that read M = token_cosine_map(q, c) and return one
// score per map), the built-in F3 (CNN) and F4 (patch Transformer) verifiers that
// training/verifier_trainer.h trains, and a runner for any TorchScript module of the same
// contract. Only the source files depend on libtorch; this header stays torch-free.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "counterpoint/core/matrix.h"

namespace counterpoint::scoring {

class MapVerifier {
 public:
  virtual ~MapVerifier();
  // One score per map, in order. Maps may have different shapes; an empty list gives an
  // empty result. Empty maps or NaN/Inf throw InvalidArgument.
  virtual std::vector<float> score(const std::vector<Matrix>& maps) const = 0;
  virtual std::string name() const = 0;
};

// Runs a TorchScript module on the CPU with
//   forward(maps: float32[B, 3, S, S], valid: float32[B, S, S]) -> float32[B] (or [B, 1])
// Channel 0 is M, channel 1 broadcasts each query token's max over candidate tokens along its
// row, channel 2 each candidate token's max over query tokens along its column; both maxima
// are taken over the whole map before it is zero-padded or cropped to S x S. valid is 1 where
// a real (query token, candidate token) pair lies and 0 in the padding. S is the module's
// integer attribute `map_size` if present, else 128.
class TorchScriptMapVerifier : public MapVerifier {
 public:
  // Missing file -> FileNotFound; not a loadable TorchScript file -> CorruptFile;
  // map_size <= 0 -> CorruptFile.
  explicit TorchScriptMapVerifier(const std::string& path);
  ~TorchScriptMapVerifier() override;
  TorchScriptMapVerifier(const TorchScriptMapVerifier&) = delete;
  TorchScriptMapVerifier& operator=(const TorchScriptMapVerifier&) = delete;

  // A module output of another shape than [B] or [B, 1] throws InvalidArgument.
  std::vector<float> score(const std::vector<Matrix>& maps) const override;
  std::string name() const override;  // "torchscript:<file name>"
  int map_size() const;

  static constexpr int kDefaultMapSize = 128;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

enum class VerifierArchitecture {
  kCnn,               // F3: two conv + batch-norm + max-pool blocks, global average pool, MLP, tanh
  kPatchTransformer,  // F4: patch embedding, CLS token, one pre-LN encoder layer, MLP on CLS, tanh
};
VerifierArchitecture parse_verifier_architecture(const std::string& name);  // "cnn", "transformer"
std::string to_string(VerifierArchitecture architecture);

// Sizes of a built-in verifier. Both read the same three channels and valid mask as
// TorchScriptMapVerifier. The reference (REFERENCE.md section 3) uses map_size 128 and F3 width
// 128; the defaults here, 32 and 32, hold sentence-length texts and make a training step about
// 16 x 16 times cheaper, which is what CPU training needs (a reference-sized step over 32 x 33
// in-batch maps holds tens of GB of activations).
struct VerifierShape {
  VerifierArchitecture architecture = VerifierArchitecture::kCnn;
  int map_size = 32;      // S: maps are zero-padded or cropped to S x S; in [4, 1024]
  int width = 32;         // F3: channels of the first convolution (the second has twice as many,
                          // the MLP this many); F4: patch embedding size D. In [1, 4096]
  int patch = 8;          // F4: patch side, must divide map_size
  int feed_forward = 32;  // F4: feed-forward width of the encoder layer
  double dropout = 0.1;   // in [0, 1)
};
// InvalidArgument naming the first size out of range.
void validate(const VerifierShape& shape);

// A trained built-in verifier, read from the directory training::train_verifier writes:
// verifier.json (format, version, shape, weights checksum, training provenance) and weights.pt.
// Scoring runs in eval mode (no dropout, batch-norm running statistics).
class BuiltinMapVerifier : public MapVerifier {
 public:
  // Missing directory or file -> FileNotFound; a damaged, tampered or foreign file -> CorruptFile.
  static std::shared_ptr<BuiltinMapVerifier> load(const std::string& directory);
  ~BuiltinMapVerifier() override;
  BuiltinMapVerifier(const BuiltinMapVerifier&) = delete;
  BuiltinMapVerifier& operator=(const BuiltinMapVerifier&) = delete;

  std::vector<float> score(const std::vector<Matrix>& maps) const override;
  std::string name() const override;  // "cnn:<directory name>" or "transformer:<directory name>"
  const VerifierShape& shape() const;

  static constexpr const char* kFormat = "counterpoint-map-verifier";
  static constexpr int kFormatVersion = 1;

 private:
  struct Impl;
  explicit BuiltinMapVerifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A directory -> BuiltinMapVerifier::load; a file -> TorchScriptMapVerifier; nothing -> FileNotFound.
std::shared_ptr<const MapVerifier> load_map_verifier(const std::string& path);

}  // namespace counterpoint::scoring
