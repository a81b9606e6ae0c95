// Token-level scores: the token cosine map and its fixed reductions F0, F1, F2.
#include "counterpoint/scoring/token_maps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "counterpoint/core/errors.h"

namespace counterpoint::scoring {
namespace {

const float kHalfSqrt2 = 0.70710678f;

// Query tokens e1, e2; candidate tokens e1, (1, 1), 0.
Matrix small_map() {
  const std::vector<float> q = {1, 0, 0, 1};
  const std::vector<float> c = {1, 0, 1, 1, 0, 0};
  return token_cosine_map(MatrixView(q.data(), 2, 2), MatrixView(c.data(), 3, 2));
}

TEST(TokenCosineMap, RowsAreQueryTokensAndZeroTokensGiveZero) {
  const Matrix m = small_map();
  ASSERT_EQ(m.rows(), 2u);
  ASSERT_EQ(m.cols(), 3u);
  EXPECT_FLOAT_EQ(m(0, 0), 1.0f);
  EXPECT_FLOAT_EQ(m(0, 1), kHalfSqrt2);
  EXPECT_FLOAT_EQ(m(0, 2), 0.0f);
  EXPECT_FLOAT_EQ(m(1, 0), 0.0f);
  EXPECT_FLOAT_EQ(m(1, 1), kHalfSqrt2);
  EXPECT_FLOAT_EQ(m(1, 2), 0.0f);
}

TEST(TokenCosineMap, IgnoresVectorLength) {
  const std::vector<float> q = {3, 4};
  const std::vector<float> c = {-30, -40, 0.4f, -0.3f};
  const Matrix m = token_cosine_map(MatrixView(q.data(), 1, 2), MatrixView(c.data(), 2, 2));
  EXPECT_FLOAT_EQ(m(0, 0), -1.0f);
  EXPECT_NEAR(m(0, 1), 0.0f, 1e-7);
}

TEST(TokenCosineMap, RejectsBadInput) {
  const std::vector<float> q = {1, 0, 0, 1}, c = {1, 0, 0};
  EXPECT_THROW(token_cosine_map(MatrixView(q.data(), 0, 2), MatrixView(c.data(), 1, 2)), InvalidArgument);
  EXPECT_THROW(token_cosine_map(MatrixView(q.data(), 2, 2), MatrixView(c.data(), 0, 2)), InvalidArgument);
  EXPECT_THROW(token_cosine_map(MatrixView(q.data(), 2, 2), MatrixView(c.data(), 1, 3)), InvalidArgument);
  const std::vector<float> nan_tokens = {1, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW(token_cosine_map(MatrixView(nan_tokens.data(), 1, 2), MatrixView(q.data(), 2, 2)),
               InvalidArgument);
}

TEST(MapReductions, MeanIsF0) {
  EXPECT_FLOAT_EQ(map_mean(small_map()), (1.0f + 2 * kHalfSqrt2) / 6.0f);
}

TEST(MapReductions, MaxSimAveragesTheBestMatchOfEachQueryToken) {
  EXPECT_FLOAT_EQ(map_maxsim(small_map()), (1.0f + kHalfSqrt2) / 2.0f);
}

TEST(MapReductions, AlignmentOnTheIdentityMap) {
  // Row i: softmax over ((1 - 0) / 0.1, (0 - 0.1) / 0.1) = (10, -1) puts weight
  // 1 / (1 + e^-11) on the diagonal, whose M is 1; the off-diagonal M is 0.
  const Matrix identity(2, 2, {1, 0, 0, 1});
  EXPECT_FLOAT_EQ(map_alignment(identity), 1.0f / (1.0f + std::exp(-11.0f)));
}

TEST(MapReductions, AlignmentOnTheSmallMap) {
  // Computed in double with NumPy from the definition.
  EXPECT_NEAR(map_alignment(small_map()), 0.8505053134866455, 1e-6);
}

TEST(MapReductions, AlignmentLimits) {
  const Matrix m(2, 3, {0.2f, 0.9f, -0.1f, 0.5f, 0.4f, 0.3f});
  // A huge temperature weighs all positions equally: F2 -> F0.
  EXPECT_NEAR(map_alignment(m, {0.0f, 1e6f}), map_mean(m), 1e-5);
  // A tiny temperature without distance penalty picks each row's max: F2 -> F1, without overflow.
  EXPECT_NEAR(map_alignment(m, {0.0f, 1e-6f}), map_maxsim(m), 1e-6);
  // A strong distance penalty keeps each query token on its own position: mean of the diagonal.
  EXPECT_NEAR(map_alignment(m, {100.0f, 0.1f}), (0.2f + 0.4f) / 2.0f, 1e-6);
}

TEST(MapReductions, RejectBadInput) {
  const Matrix empty;
  EXPECT_THROW(map_mean(empty), InvalidArgument);
  EXPECT_THROW(map_maxsim(empty), InvalidArgument);
  EXPECT_THROW(map_alignment(empty), InvalidArgument);
  const Matrix m(1, 2, {0.5f, std::numeric_limits<float>::infinity()});
  EXPECT_THROW(map_mean(m), InvalidArgument);
  EXPECT_THROW(map_maxsim(m), InvalidArgument);
  EXPECT_THROW(map_alignment(m), InvalidArgument);
  const Matrix ok(1, 2, {0.5f, 0.25f});
  EXPECT_THROW(map_alignment(ok, {0.1f, 0.0f}), InvalidArgument);
  EXPECT_THROW(map_alignment(ok, {NAN, 0.1f}), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::scoring
