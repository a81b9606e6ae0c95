// counterpoint/training/losses.h: the training objectives, as differentiable libtorch functions.
// SparseCL (contradiction retrieval: anchors should differ from their positives in few
// coordinates) and cosine InfoNCE / Multiple Negatives Ranking (CL, Prompt+CL, stance curricula).
// Both score every anchor against all in-batch positives plus all hard negatives, so a batch
// must never hold two triples whose texts could be correct answers for each other.
#pragma once

#include <string>

#include <torch/torch.h>

#include "counterpoint/scoring/sparsity.h"

namespace counterpoint::training {

// The measures are scoring's (one enum and parser, counterpoint/scoring/sparsity.h), here as
// differentiable tensors: hoyer (sqrt(d) - |x|_1 / |x|_2) / (sqrt(d) - 1), l2l1 |x|_2 / |x|_1,
// kappa4 |x|_4^4 / |x|_2^4.
using scoring::Sparsity;

// Sparsity of each row of `x` ([..., D] -> [...]). Norms are clamped as in the SparseCL reference
// code, |x|_1 >= sqrt(D) * 1e-6 and |x|_2 >= 1e-6, so identical vectors give a finite value
// (Hoyer 0) and a finite gradient.
torch::Tensor sparsity(const torch::Tensor& x, Sparsity kind);

// [N, M] matrix of sparsity(normalize(a_i) - normalize(b_j)) for a [N, D], b [M, D].
torch::Tensor pairwise_difference_sparsity(const torch::Tensor& a, const torch::Tensor& b,
                                           Sparsity kind);

// SparseCL loss (mean over the batch). anchor and positive are [N, D]; negative is [N*k, D]
// with rows i*k .. i*k+k-1 the hard negatives of anchor i (k = 0 allowed: an empty [0, D]).
//   l_i = -log( exp(H(a_i, p_i)/t) / sum_j [exp(H(a_i, p_j)/t)] + sum_m [exp(H(a_i, n_m)/t + w_im)] )
// with H the pairwise difference sparsity and w_im = hard_negative_weight for anchor i's own
// negatives (0 elsewhere), added to the logit after the temperature as the reference code does.
torch::Tensor sparsecl_loss(const torch::Tensor& anchor, const torch::Tensor& positive,
                            const torch::Tensor& negative, Sparsity kind, double temperature,
                            double hard_negative_weight = 0.0);

// Cosine InfoNCE / Multiple Negatives Ranking loss with the same layout: logits
// cos(a_i, candidate) / temperature over all positives and all negatives, target p_i.
// temperature 0.05 equals sentence-transformers' MNRL scale 20.
torch::Tensor contrastive_loss(const torch::Tensor& anchor, const torch::Tensor& positive,
                               const torch::Tensor& negative, double temperature = 0.05,
                               double hard_negative_weight = 0.0);

// Map-verifier loss (InfoNCE over in-batch candidates plus explicit negatives). scores is
// [N, N + k]: column j < N holds the verifier's score of anchor i against positive j, columns
// N .. N+k-1 its score against its own k negatives. Cross-entropy of scores / temperature with
// target column i, averaged over the batch.
torch::Tensor map_verifier_loss(const torch::Tensor& scores, double temperature = 0.1);

}  // namespace counterpoint::training
