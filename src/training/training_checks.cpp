#include "training_checks.h"

#include <algorithm>
#include <cmath>

#include "counterpoint/core/errors.h"

namespace counterpoint::training::detail {

std::size_t require_uniform_triples(const std::vector<Triple>& triples, const std::string& caller) {
  if (triples.empty()) throw InvalidArgument(caller + ": no triples");
  const std::size_t k = triples.front().negatives.size();
  for (std::size_t i = 0; i < triples.size(); ++i) {
    if (triples[i].negatives.size() != k) {
      throw InvalidArgument(caller + ": triple " + std::to_string(i) + " has " +
                            std::to_string(triples[i].negatives.size()) + " negatives, triple 0 has " +
                            std::to_string(k) + " (every triple needs the same count)");
    }
  }
  return k;
}

void require_valid(const OptimizerSettings& s, const std::string& output_dir, const std::string& config) {
  if (output_dir.empty()) throw InvalidArgument(config + ".output_dir is empty");
  if (s.epochs < 1) throw InvalidArgument(config + ".epochs must be >= 1");
  if (!(s.temperature > 0) || !std::isfinite(s.temperature)) {
    throw InvalidArgument(config + ".temperature must be a positive finite number");
  }
  if (!(s.learning_rate > 0) || !std::isfinite(s.learning_rate)) {
    throw InvalidArgument(config + ".learning_rate must be a positive finite number");
  }
  if (!(s.weight_decay >= 0)) throw InvalidArgument(config + ".weight_decay must be >= 0");
  if (!(s.warmup_ratio >= 0 && s.warmup_ratio <= 1)) throw InvalidArgument(config + ".warmup_ratio must be in [0, 1]");
  if (!(s.max_grad_norm >= 0)) throw InvalidArgument(config + ".max_grad_norm must be >= 0");
  if (s.threads < 0) throw InvalidArgument(config + ".threads must be >= 0");
}

double schedule_factor(std::size_t step, std::size_t total, std::size_t warmup) {
  if (step < warmup) return double(step + 1) / double(warmup);
  if (total <= warmup) return 1.0;
  return std::max(0.0, double(total - step) / double(total - warmup));
}

}  // namespace counterpoint::training::detail
