#include "counterpoint/training/losses.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "counterpoint/core/errors.h"

namespace counterpoint::training {
namespace {

using Rows = std::vector<std::vector<double>>;

torch::Tensor tensor_of(const Rows& rows) {
  const int64_t n = int64_t(rows.size());
  const int64_t d = rows.empty() ? 0 : int64_t(rows[0].size());
  auto t = torch::zeros({n, d}, torch::kFloat64);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) t[i][j] = rows[std::size_t(i)][std::size_t(j)];
  return t;
}

std::vector<double> normalized(const std::vector<double>& v) {
  double norm = 0;
  for (double x : v) norm += x * x;
  norm = std::sqrt(norm);
  std::vector<double> out;
  for (double x : v) out.push_back(x / norm);
  return out;
}

double hoyer_of_difference(const std::vector<double>& a, const std::vector<double>& b) {
  const auto na = normalized(a), nb = normalized(b);
  const double d = double(a.size());
  double l1 = 0, l2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = na[i] - nb[i];
    l1 += std::abs(x);
    l2 += x * x;
  }
  l2 = std::max(std::sqrt(l2), 1e-6);
  l1 = std::max(l1, std::sqrt(d) * 1e-6);
  return (std::sqrt(d) - l1 / l2) / (std::sqrt(d) - 1);
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  const auto na = normalized(a), nb = normalized(b);
  double dot = 0;
  for (std::size_t i = 0; i < a.size(); ++i) dot += na[i] * nb[i];
  return dot;
}

// Mean over anchors of -log softmax at the anchor's own positive, with the scores of every
// positive and every negative as logits (own negatives get `weight` added).
template <typename Score>
double expected_loss(const Rows& anchors, const Rows& positives, const Rows& negatives,
                     double temperature, double weight, Score score) {
  const std::size_t n = anchors.size(), k = negatives.size() / n;
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double denominator = 0;
    for (std::size_t j = 0; j < n; ++j) denominator += std::exp(score(anchors[i], positives[j]) / temperature);
    for (std::size_t m = 0; m < negatives.size(); ++m) {
      const double w = (m / k == i) ? weight : 0.0;
      denominator += std::exp(score(anchors[i], negatives[m]) / temperature + w);
    }
    total += -(score(anchors[i], positives[i]) / temperature - std::log(denominator));
  }
  return total / double(n);
}

const Rows kAnchors = {{1.0, 0.2, -0.3, 0.5}, {0.1, -1.0, 0.4, 0.3}, {0.7, 0.7, 0.1, -0.2}};
const Rows kPositives = {{1.0, 0.2, 0.9, 0.5}, {-0.2, -0.8, 0.5, 0.1}, {0.6, 0.9, 0.0, -0.4}};
const Rows kNegatives = {{0.3, 0.2, -0.1, 1.5}, {0.9, 0.1, -0.2, 0.4}, {0.2, 0.3, 0.4, 0.5},
                         {-0.3, -0.8, 0.1, 0.2}, {0.1, 0.1, 0.1, -0.9}, {0.8, 0.6, 0.3, 0.0}};

TEST(Sparsity, HoyerIsOneForOneNonZeroCoordinateAndZeroForAFlatVector) {
  auto one_hot = torch::tensor({0.0, 0.0, 3.0, 0.0}, torch::kFloat64);
  auto flat = torch::tensor({-2.0, 2.0, 2.0, -2.0}, torch::kFloat64);
  EXPECT_NEAR(sparsity(one_hot, Sparsity::kHoyer).item<double>(), 1.0, 1e-12);
  EXPECT_NEAR(sparsity(flat, Sparsity::kHoyer).item<double>(), 0.0, 1e-12);
}

TEST(Sparsity, L2L1AndKappa4FollowTheirDefinitions) {
  auto x = torch::tensor({1.0, -2.0, 0.0, 2.0}, torch::kFloat64);
  // |x|_1 = 5, |x|_2 = 3, |x|_4^4 = 1 + 16 + 16 = 33.
  EXPECT_NEAR(sparsity(x, Sparsity::kL2L1).item<double>(), 3.0 / 5.0, 1e-12);
  EXPECT_NEAR(sparsity(x, Sparsity::kKappa4).item<double>(), 33.0 / 81.0, 1e-12);
}

TEST(Sparsity, IdenticalVectorsGiveAFiniteValueAndGradientThanksToTheClamps) {
  auto a = torch::tensor({{0.5, 0.5, 0.5, 0.5}}, torch::kFloat64).requires_grad_(true);
  auto h = pairwise_difference_sparsity(a, a.detach(), Sparsity::kHoyer);
  EXPECT_NEAR(h.item<double>(), 0.0, 1e-12);
  h.sum().backward();
  EXPECT_TRUE(torch::isfinite(a.grad()).all().item<bool>());
}

// One enum for training and scoring: each measure the loss differentiates is the value the
// stage-2 kernel computes at search time.
TEST(Sparsity, EveryMeasureEqualsTheScoringKernelOfTheSameName) {
  torch::manual_seed(3);
  const auto x = torch::randn({16}, torch::kFloat64);
  const auto as_float = x.to(torch::kFloat32).contiguous();
  for (auto kind : {Sparsity::kHoyer, Sparsity::kL2L1, Sparsity::kKappa4}) {
    scoring::SparsityOptions options;
    options.function = kind;
    options.identical_guard = false;
    EXPECT_NEAR(sparsity(x, kind).item<double>(), scoring::sparsity(as_float.data_ptr<float>(), 16, options), 1e-6)
        << to_string(kind);
  }
}

TEST(SparseCLLoss, MatchesTheReferenceFormulaComputedByHand) {
  const double temperature = 0.05;
  for (double weight : {0.0, 0.7}) {
    const double expected =
        expected_loss(kAnchors, kPositives, kNegatives, temperature, weight, hoyer_of_difference);
    const double actual = sparsecl_loss(tensor_of(kAnchors), tensor_of(kPositives), tensor_of(kNegatives),
                                        Sparsity::kHoyer, temperature, weight)
                              .item<double>();
    EXPECT_NEAR(actual, expected, 1e-9) << "hard_negative_weight " << weight;
  }
}

TEST(SparseCLLoss, WorksWithoutHardNegatives) {
  const double expected = expected_loss(kAnchors, kPositives, {}, 0.02, 0.0, hoyer_of_difference);
  auto empty = torch::zeros({0, 4}, torch::kFloat64);
  EXPECT_NEAR(sparsecl_loss(tensor_of(kAnchors), tensor_of(kPositives), empty, Sparsity::kHoyer, 0.02)
                  .item<double>(),
              expected, 1e-9);
}

TEST(SparseCLLoss, DecreasesWhenPositivesBecomeSparserDifferencesOfTheirAnchors) {
  // Positive i differs from anchor i first in every coordinate, then in one coordinate only.
  const Rows anchors = {{1, 0, 0, 0, 1, 0}, {0, 1, 0, 1, 0, 0}, {0, 0, 1, 0, 0, 1}};
  const Rows dense = {{0.6, 0.3, -0.3, 0.3, 0.6, 0.3}, {0.3, 0.6, 0.3, 0.6, -0.3, 0.3},
                      {0.3, -0.3, 0.6, 0.3, 0.3, 0.6}};
  const Rows sparse = {{1, 0, 0, 0, -1, 0}, {0, 1, 0, -1, 0, 0}, {0, 0, 1, 0, 0, -1}};
  const Rows negatives = {{0.2, 0.9, 0.1, 0, 1, 0}, {0.5, 1, 0, 0.5, 0, 0.5}, {0, 0.4, 1, 0.4, 0, 1}};
  const double dense_loss = sparsecl_loss(tensor_of(anchors), tensor_of(dense), tensor_of(negatives),
                                          Sparsity::kHoyer, 0.05).item<double>();
  const double sparse_loss = sparsecl_loss(tensor_of(anchors), tensor_of(sparse), tensor_of(negatives),
                                           Sparsity::kHoyer, 0.05).item<double>();
  EXPECT_LT(sparse_loss, dense_loss);
}

TEST(SparseCLLoss, GradientMatchesFiniteDifferences) {
  for (auto kind : {Sparsity::kHoyer, Sparsity::kL2L1, Sparsity::kKappa4}) {
    auto anchor = tensor_of(kAnchors).requires_grad_(true);
    auto positive = tensor_of(kPositives);
    auto negative = tensor_of(kNegatives);
    auto loss = sparsecl_loss(anchor, positive, negative, kind, 0.1, 0.3);
    loss.backward();
    auto grad = anchor.grad();
    const double h = 1e-6;
    for (int64_t i = 0; i < anchor.size(0); ++i) {
      for (int64_t j = 0; j < anchor.size(1); ++j) {
        auto plus = tensor_of(kAnchors), minus = tensor_of(kAnchors);
        plus[i][j] += h;
        minus[i][j] -= h;
        const double numeric = (sparsecl_loss(plus, positive, negative, kind, 0.1, 0.3).item<double>() -
                                sparsecl_loss(minus, positive, negative, kind, 0.1, 0.3).item<double>()) /
                               (2 * h);
        EXPECT_NEAR(grad[i][j].item<double>(), numeric, 1e-5) << to_string(kind) << " at " << i << "," << j;
      }
    }
  }
}

TEST(SparseCLLoss, RejectsMismatchedShapesAndBadTemperatures) {
  auto a = tensor_of(kAnchors), p = tensor_of(kPositives), n = tensor_of(kNegatives);
  EXPECT_THROW(sparsecl_loss(a, p.narrow(0, 0, 2), n, Sparsity::kHoyer, 0.05), InvalidArgument);
  EXPECT_THROW(sparsecl_loss(a, p, n.narrow(0, 0, 4), Sparsity::kHoyer, 0.05), InvalidArgument);
  EXPECT_THROW(sparsecl_loss(a, p, n, Sparsity::kHoyer, 0.0), InvalidArgument);
  EXPECT_THROW(sparsecl_loss(a, p, n.narrow(1, 0, 3), Sparsity::kHoyer, 0.05), InvalidArgument);
}

TEST(ContrastiveLoss, MatchesCosineInfoNCEComputedByHand) {
  for (double temperature : {0.05, 1.0}) {
    const double expected = expected_loss(kAnchors, kPositives, kNegatives, temperature, 0.0, cosine);
    const double actual =
        contrastive_loss(tensor_of(kAnchors), tensor_of(kPositives), tensor_of(kNegatives), temperature)
            .item<double>();
    EXPECT_NEAR(actual, expected, 1e-9) << "temperature " << temperature;
  }
}

TEST(ContrastiveLoss, GradientMatchesFiniteDifferences) {
  auto anchor = tensor_of(kAnchors);
  auto positive = tensor_of(kPositives).requires_grad_(true);
  auto negative = tensor_of(kNegatives);
  contrastive_loss(anchor, positive, negative, 0.1).backward();
  const double h = 1e-6;
  for (int64_t i = 0; i < positive.size(0); ++i) {
    for (int64_t j = 0; j < positive.size(1); ++j) {
      auto plus = tensor_of(kPositives), minus = tensor_of(kPositives);
      plus[i][j] += h;
      minus[i][j] -= h;
      const double numeric = (contrastive_loss(anchor, plus, negative, 0.1).item<double>() -
                              contrastive_loss(anchor, minus, negative, 0.1).item<double>()) / (2 * h);
      EXPECT_NEAR(positive.grad()[i][j].item<double>(), numeric, 1e-5);
    }
  }
}

TEST(ContrastiveLoss, IsLowestWhenEachAnchorPointsAtItsOwnPositive) {
  const Rows anchors = {{1, 0, 0}, {0, 1, 0}};
  const Rows matching = {{1, 0.1, 0}, {0.1, 1, 0}};
  const Rows swapped = {{0.1, 1, 0}, {1, 0.1, 0}};
  auto none = torch::zeros({0, 3}, torch::kFloat64);
  EXPECT_LT(contrastive_loss(tensor_of(anchors), tensor_of(matching), none).item<double>(),
            contrastive_loss(tensor_of(anchors), tensor_of(swapped), none).item<double>());
}

}  // namespace
}  // namespace counterpoint::training
