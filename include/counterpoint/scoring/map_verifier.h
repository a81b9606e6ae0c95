// counterpoint/scoring/map_verifier.h: learned verifiers that score token cosine maps.
// Owns the MapVerifier interface (F3/F4-style models that read M = token_cosine_map(q, c) and
// return one score per map) and its TorchScript implementation. Only this implementation's
// source file depends on libtorch; the header stays torch-free.
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

}  // namespace counterpoint::scoring
