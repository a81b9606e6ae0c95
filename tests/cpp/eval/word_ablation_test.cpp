#include "counterpoint/eval/word_ablation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "counterpoint/core/errors.h"

using namespace counterpoint;
using namespace counterpoint::eval;

namespace {

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

// A stand-in encoder: 0.5 + 0.2 if the query still says "attacking" + 0.05 if it says "taxes".
double fake_cosine(const std::string& query, const std::string& document) {
  return 0.5 + (contains(query, "attacking") ? 0.2 : 0.0) + (contains(query, "taxes") ? 0.05 : 0.0);
}

}  // namespace

// Instruction "Find attacking arguments", claim "raise taxes"; cos(q, p) = 0.75.
// Deltas: Find 0, attacking -0.2, arguments 0 | raise 0, taxes -0.05.
// RIS = 0.2 / 0.25 = 0.8, RCS = 0.05 / 0.25 = 0.2, DI = -0.2 over the one stance keyword.
TEST(WordAblation, InstructionAndClaimShares) {
  WordAblation result = ablate_words({"Find attacking arguments", "raise taxes"}, "p1", fake_cosine);
  ASSERT_EQ(result.instruction_deltas.size(), 3u);
  ASSERT_EQ(result.claim_deltas.size(), 2u);
  EXPECT_NEAR(result.instruction_deltas[1], -0.2, 1e-12);
  EXPECT_NEAR(result.claim_deltas[1], -0.05, 1e-12);
  EXPECT_NEAR(result.ris, 0.8, 1e-8);
  EXPECT_NEAR(result.rcs, 0.2, 1e-8);
  EXPECT_NEAR(result.di, -0.2, 1e-12);
  EXPECT_EQ(result.stance_words, 1u);
}

TEST(WordAblation, DefaultTemplateAndDeletedWordsAreVisibleToTheEncoder) {
  std::vector<std::string> queries;
  auto recording = [&](const std::string& query, const std::string&) {
    queries.push_back(query);
    return 0.0;
  };
  WordAblation result = ablate_words({"Refute:  this", "x"}, "doc", recording);
  EXPECT_EQ(queries, (std::vector<std::string>{"Instruct: Refute:  this\nQuery: x",
                                               "Instruct: this\nQuery: x",
                                               "Instruct: Refute:\nQuery: x",
                                               "Instruct: Refute:  this\nQuery: "}));
  // No word changed the cosine: both shares are 0 thanks to the 1e-9 in the denominator.
  EXPECT_EQ(result.ris, 0.0);
  EXPECT_EQ(result.rcs, 0.0);
  EXPECT_EQ(result.stance_words, 1u);  // "Refute:" matches "refute" once punctuation is stripped
}

TEST(WordAblation, NonFiniteCosineIsRejected) {
  auto broken = [](const std::string&, const std::string&) { return std::nan(""); };
  EXPECT_THROW(ablate_words({"a", "b"}, "d", broken), InvalidArgument);
}

TEST(WordAblationSummary, MeanAndPopulationStdPerClass) {
  WordAblation first;
  first.ris = 0.8;
  first.rcs = 0.2;
  first.di = -0.3;
  first.stance_words = 1;
  WordAblation second;
  second.ris = 0.4;
  second.rcs = 0.6;
  WordAblation easy;
  easy.ris = 0.1;
  std::map<std::string, AblationSummary> summary =
      summarize_ablation({{"hard", first}, {"hard", second}, {"easy", easy}});
  const AblationSummary& hard = summary.at("hard");
  EXPECT_EQ(hard.documents, 2u);
  EXPECT_NEAR(hard.ris.mean, 0.6, 1e-12);
  EXPECT_NEAR(hard.ris.std, 0.2, 1e-12);
  EXPECT_NEAR(hard.rcs.mean, 0.4, 1e-12);
  EXPECT_EQ(hard.di_documents, 1u);  // the second document's instruction had no stance keyword
  EXPECT_NEAR(hard.di.mean, -0.3, 1e-12);
  EXPECT_EQ(hard.di.std, 0.0);
  EXPECT_EQ(summary.at("easy").documents, 1u);
}
