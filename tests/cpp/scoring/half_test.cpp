// IEEE binary16 storage of sparse-aware embeddings: conversion and the f16 scoring path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/scoring/pooled.h"

namespace counterpoint::scoring {
namespace {

using ::testing::HasSubstr;

TEST(HalfConversion, KnownBitPatterns) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(0.1f), 0x2E66);
  EXPECT_EQ(float_to_half(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);                      // largest finite half
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);          // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);          // smallest normal
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
}

TEST(HalfConversion, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01).
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 lies halfway between 0x3C01 and 0x3C02 (even).
  EXPECT_EQ(float_to_half(1.0f + 3.0f * std::ldexp(1.0f, -11)), 0x3C02);
  // Just above the halfway point rounds up.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // halfway to 2^16: rounds to even, i.e. Inf
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);  // below half the smallest subnormal
}

TEST(HalfConversion, DecodesExactly) {
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  // Every finite half survives a round trip.
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float v = half_to_float(static_cast<std::uint16_t>(bits));
    if (std::isfinite(v)) {
      EXPECT_EQ(float_to_half(v), bits) << bits;
    }
  }
}

Matrix random_unit_rows(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix m(rows, cols);
  for (float& v : m.values()) v = normal(rng);
  normalize_rows(m);
  return m;
}

TEST(SparsityScoresF16, EqualsTheFloatPathOnDecodedRows) {
  const std::size_t d = 96, k = 20;
  const Matrix q = random_unit_rows(1, d, 1);
  const Matrix c = random_unit_rows(k, d, 2);
  const std::vector<std::uint16_t> stored = to_half(c);
  ASSERT_EQ(stored.size(), k * d);
  Matrix decoded(k, d);
  for (std::size_t i = 0; i < k * d; ++i) decoded.values()[i] = half_to_float(stored[i]);  // scalar
  for (Sparsity f : {Sparsity::kHoyer, Sparsity::kL2L1, Sparsity::kKappa4}) {
    SparsityOptions options;
    options.function = f;
    std::vector<float> from_half(k), from_float(k), from_original(k);
    sparsity_scores_f16(q, stored.data(), k, d, options, from_half.data());
    sparsity_scores(q, decoded, options, from_float.data());
    sparsity_scores(q, c, options, from_original.data());
    for (std::size_t i = 0; i < k; ++i) {
      EXPECT_EQ(from_half[i], from_float[i]);
      EXPECT_NEAR(from_half[i], from_original[i], 2e-3);  // half keeps ~3 decimal digits
    }
  }
}

TEST(SparsityScoresF16, RejectsBadInput) {
  const std::size_t d = 8;
  const Matrix q = random_unit_rows(1, d, 1);
  std::vector<std::uint16_t> stored = to_half(random_unit_rows(3, d, 2));
  std::vector<float> out(3);
  EXPECT_THROW(sparsity_scores_f16(q, stored.data(), 3, d + 1, {}, out.data()), InvalidArgument);
  EXPECT_THROW(sparsity_scores_f16(q, nullptr, 3, d, {}, out.data()), InvalidArgument);
  for (std::uint16_t bad : {std::uint16_t(0x7E00), std::uint16_t(0x7C00), std::uint16_t(0xFC00)}) {
    stored[2 * d + 5] = bad;
    try {
      sparsity_scores_f16(q, stored.data(), 3, d, {}, out.data());
      FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("stored candidate row 2"));
      EXPECT_THAT(e.what(), HasSubstr("column 5 is not finite"));
    }
  }
}

// The gather-and-score kernels read listed rows of a table in place; their scores are the
// contiguous kernels' on those rows, bit for bit.
TEST(SparsityScoresGather, EqualTheContiguousKernelsOnTheListedRows) {
  const std::size_t d = 96, table_rows = 30;
  const Matrix q = random_unit_rows(1, d, 3);
  const Matrix table = random_unit_rows(table_rows, d, 4);
  const std::vector<std::uint16_t> half_table = to_half(table);
  const std::vector<std::int64_t> listed = {17, 0, 29, 5, 5, 12};
  Matrix gathered(listed.size(), d);
  std::vector<std::uint16_t> gathered_half;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    std::copy_n(table.row(std::size_t(listed[i])), d, gathered.row(i));
    gathered_half.insert(gathered_half.end(), half_table.begin() + listed[i] * long(d),
                         half_table.begin() + (listed[i] + 1) * long(d));
  }
  for (Sparsity f : {Sparsity::kHoyer, Sparsity::kL2L1, Sparsity::kKappa4}) {
    SparsityOptions options;
    options.function = f;
    const std::size_t n = listed.size();
    std::vector<float> in_place(n), copied(n), in_place_half(n), copied_half(n);
    sparsity_scores_gather(q, table.data(), table_rows, listed.data(), n, options, in_place.data());
    sparsity_scores(q, gathered, options, copied.data());
    sparsity_scores_gather_f16(q, half_table.data(), table_rows, listed.data(), n, options, in_place_half.data());
    sparsity_scores_f16(q, gathered_half.data(), n, d, options, copied_half.data());
    EXPECT_EQ(in_place, copied) << to_string(f);
    EXPECT_EQ(in_place_half, copied_half) << to_string(f);
  }
}

TEST(SparsityScoresGather, RefusesRowsOutsideTheTableAndNamesANonFiniteRow) {
  const std::size_t d = 8;
  const Matrix q = random_unit_rows(1, d, 1);
  Matrix table = random_unit_rows(4, d, 2);
  std::vector<float> out(2);
  const std::vector<std::int64_t> outside = {1, 4}, negative = {-1}, fine = {0, 2};
  EXPECT_THROW(sparsity_scores_gather(q, table.data(), 4, outside.data(), 2, {}, out.data()), InvalidArgument);
  EXPECT_THROW(sparsity_scores_gather(q, table.data(), 4, negative.data(), 1, {}, out.data()), InvalidArgument);
  const std::vector<std::uint16_t> half_table = to_half(table);
  EXPECT_THROW(sparsity_scores_gather_f16(q, half_table.data(), 4, outside.data(), 2, {}, out.data()),
               InvalidArgument);
  table.row(2)[3] = std::numeric_limits<float>::quiet_NaN();
  try {
    sparsity_scores_gather(q, table.data(), 4, fine.data(), 2, {}, out.data());
    FAIL() << "a NaN table row was scored";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("table row 2"), std::string::npos) << e.what();
  }
}

TEST(FinalScores, AreTheStageOneScorePlusAlphaTimesTheSparsity) {
  const std::vector<float> stage1 = {0.5f, -0.25f, 2.0f}, sparsity = {0.1f, 0.4f, 0.0f};
  std::vector<float> out(3);
  final_scores(stage1.data(), sparsity.data(), 3, 2.5f, 1.0f, SparsityOptions{}, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.5f + 2.5f * 0.1f, -0.25f + 2.5f * 0.4f, 2.0f}));
  EXPECT_THROW(final_scores(stage1.data(), sparsity.data(), 3, std::numeric_limits<float>::infinity(), 1.0f,
                            SparsityOptions{}, out.data()),
               InvalidArgument);
}

TEST(FinalScores, AGuardedPairSinksUnderANegativeAlphaToo) {
  SparsityOptions options;
  const std::vector<float> stage1 = {0.5f, 0.9f}, sparsity = {0.1f, options.guard_value};
  std::vector<float> out(2);
  final_scores(stage1.data(), sparsity.data(), 2, -2.0f, 1.0f, options, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.5f - 2.0f * 0.1f, 0.9f + 2.0f * options.guard_value}));
  final_scores(stage1.data(), sparsity.data(), 2, -2.0f, -1.0f, options, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.5f + 2.0f * 0.1f, 0.9f + 2.0f * options.guard_value}));
  options.identical_guard = false;  // without the guard the value is an ordinary sparsity
  final_scores(stage1.data(), sparsity.data(), 2, -2.0f, 1.0f, options, out.data());
  EXPECT_EQ(out[1], 0.9f - 2.0f * options.guard_value);
}

TEST(FinalScores, ASupportSearchSubtractsTheSparsityExceptFromAGuardedPair) {
  SparsityOptions options;
  const std::vector<float> stage1 = {0.5f, -0.25f, 0.9f}, sparsity = {0.1f, 0.4f, options.guard_value};
  std::vector<float> out = stage1;  // out may alias stage1
  final_scores(out.data(), sparsity.data(), 3, 2.0f, -1.0f, options, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.5f - 2.0f * 0.1f, -0.25f - 2.0f * 0.4f, 0.9f + 2.0f * options.guard_value}));
  final_scores(stage1.data(), sparsity.data(), 3, 2.0f, 1.0f, options, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.5f + 2.0f * 0.1f, -0.25f + 2.0f * 0.4f, 0.9f + 2.0f * options.guard_value}));
  EXPECT_THROW(final_scores(stage1.data(), sparsity.data(), 3, 2.0f, 0.5f, options, out.data()), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::scoring
