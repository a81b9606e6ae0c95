#include "counterpoint/training/losses.h"

#include <cmath>

#include "counterpoint/core/errors.h"

namespace counterpoint::training {

namespace F = torch::nn::functional;

torch::Tensor sparsity(const torch::Tensor& x, Sparsity kind) {
  if (x.dim() < 1 || x.size(-1) < 2) {
    throw InvalidArgument("sparsity: vectors need at least 2 coordinates, got shape " +
                          std::to_string(x.dim() < 1 ? 0 : x.size(-1)));
  }
  const double d = double(x.size(-1));
  const double sqrt_d = std::sqrt(d);
  auto l2 = x.norm(2, -1).clamp_min(1e-6);
  switch (kind) {
    case Sparsity::kHoyer: {
      auto l1 = x.abs().sum(-1).clamp_min(sqrt_d * 1e-6);
      return (sqrt_d - l1 / l2) / (sqrt_d - 1.0);
    }
    case Sparsity::kL2L1: {
      auto l1 = x.abs().sum(-1).clamp_min(sqrt_d * 1e-6);
      return l2 / l1;
    }
    case Sparsity::kKappa4:
      return x.pow(4).sum(-1) / l2.pow(4);
  }
  return torch::Tensor();
}

torch::Tensor pairwise_difference_sparsity(const torch::Tensor& a, const torch::Tensor& b,
                                           Sparsity kind) {
  auto na = F::normalize(a, F::NormalizeFuncOptions().p(2).dim(1));
  auto nb = F::normalize(b, F::NormalizeFuncOptions().p(2).dim(1));
  return sparsity(na.unsqueeze(1) - nb.unsqueeze(0), kind);
}

namespace {

// Checks shapes and returns k, the number of hard negatives per anchor.
int64_t check_triple_shapes(const torch::Tensor& anchor, const torch::Tensor& positive,
                            const torch::Tensor& negative, double temperature, const char* loss) {
  const std::string name(loss);
  if (anchor.dim() != 2 || positive.dim() != 2 || negative.dim() != 2) {
    throw InvalidArgument(name + ": anchor, positive and negative must be 2-D [rows, dim]");
  }
  if (anchor.size(0) == 0) throw InvalidArgument(name + ": the batch is empty");
  if (positive.sizes() != anchor.sizes()) {
    throw InvalidArgument(name + ": positive must have the anchor's shape [" +
                          std::to_string(anchor.size(0)) + ", " + std::to_string(anchor.size(1)) + "]");
  }
  if (negative.size(1) != anchor.size(1) && negative.size(0) != 0) {
    throw InvalidArgument(name + ": negative width " + std::to_string(negative.size(1)) +
                          " differs from the anchor width " + std::to_string(anchor.size(1)));
  }
  if (negative.size(0) % anchor.size(0) != 0) {
    throw InvalidArgument(name + ": negative has " + std::to_string(negative.size(0)) +
                          " rows, not a multiple of the " + std::to_string(anchor.size(0)) + " anchors");
  }
  if (!(temperature > 0.0) || !std::isfinite(temperature)) {
    throw InvalidArgument(name + ": temperature must be a positive finite number");
  }
  return negative.size(0) / anchor.size(0);
}

// Cross-entropy of logits [N, N + N*k] whose target for row i is column i, with the weight added
// to each anchor's own negatives.
torch::Tensor in_batch_cross_entropy(const torch::Tensor& positive_logits,
                                     torch::Tensor negative_logits, int64_t k,
                                     double hard_negative_weight) {
  const int64_t n = positive_logits.size(0);
  if (k > 0 && hard_negative_weight != 0.0) {
    auto own = torch::eye(n, positive_logits.options()).repeat_interleave(k, 1);
    negative_logits = negative_logits + own * hard_negative_weight;
  }
  auto logits = k > 0 ? torch::cat({positive_logits, negative_logits}, 1) : positive_logits;
  auto targets = torch::arange(n, torch::TensorOptions().dtype(torch::kLong));
  return F::cross_entropy(logits, targets);
}

}  // namespace

torch::Tensor sparsecl_loss(const torch::Tensor& anchor, const torch::Tensor& positive,
                            const torch::Tensor& negative, Sparsity kind, double temperature,
                            double hard_negative_weight) {
  const int64_t k = check_triple_shapes(anchor, positive, negative, temperature, "sparsecl_loss");
  auto positive_logits = pairwise_difference_sparsity(anchor, positive, kind) / temperature;
  torch::Tensor negative_logits;
  if (k > 0) negative_logits = pairwise_difference_sparsity(anchor, negative, kind) / temperature;
  return in_batch_cross_entropy(positive_logits, negative_logits, k, hard_negative_weight);
}

torch::Tensor contrastive_loss(const torch::Tensor& anchor, const torch::Tensor& positive,
                               const torch::Tensor& negative, double temperature,
                               double hard_negative_weight) {
  const int64_t k = check_triple_shapes(anchor, positive, negative, temperature, "contrastive_loss");
  auto options = F::NormalizeFuncOptions().p(2).dim(1);
  auto a = F::normalize(anchor, options);
  auto positive_logits = a.matmul(F::normalize(positive, options).t()) / temperature;
  torch::Tensor negative_logits;
  if (k > 0) negative_logits = a.matmul(F::normalize(negative, options).t()) / temperature;
  return in_batch_cross_entropy(positive_logits, negative_logits, k, hard_negative_weight);
}

torch::Tensor map_verifier_loss(const torch::Tensor& scores, double temperature) {
  if (!(temperature > 0) || !std::isfinite(temperature)) {
    throw InvalidArgument("map_verifier_loss: temperature must be a positive finite number");
  }
  if (scores.dim() != 2 || scores.size(0) == 0 || scores.size(1) < scores.size(0)) {
    throw InvalidArgument("map_verifier_loss: scores must be [N, N + k] with N >= 1, k >= 0, got " +
                          c10::str(scores.sizes()));
  }
  auto targets = torch::arange(scores.size(0), torch::TensorOptions().dtype(torch::kLong));
  return F::cross_entropy(scores / temperature, targets);
}

}  // namespace counterpoint::training
