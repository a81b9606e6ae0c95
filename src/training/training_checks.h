// Internal to the training layer: what the encoder trainer and the verifier trainer check and
// schedule alike (triples, optimiser settings, the learning-rate schedule).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "counterpoint/training/triples.h"

namespace counterpoint::training::detail {

struct OptimizerSettings {
  std::size_t epochs;
  double temperature, learning_rate, weight_decay, warmup_ratio, max_grad_norm;
  int threads;
};

// InvalidArgument naming `caller` (e.g. "train") for no triples or triples with differing
// negative counts; returns that count.
std::size_t require_uniform_triples(const std::vector<Triple>& triples, const std::string& caller);

// InvalidArgument naming `config` (e.g. "TrainConfig") and the first bad field.
void require_valid(const OptimizerSettings& s, const std::string& output_dir, const std::string& config);

// Learning-rate factor of step s (0-based): linear ramp to 1 over the warm-up steps (the first
// step already moves), then linear decay to 0 at the last step.
double schedule_factor(std::size_t step, std::size_t total, std::size_t warmup);

}  // namespace counterpoint::training::detail
