// Okapi BM25: analysis, hand-computed scores, add/remove bookkeeping.
#include "counterpoint/index/bm25.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"

namespace counterpoint::index {
namespace {

using ::testing::ElementsAre;

Bm25Index three_documents(Bm25Options options = {}) {
  Bm25Index bm25(options);
  bm25.add(0, "The cat sat.");
  bm25.add(1, "the dog sat on the mat");
  bm25.add(2, "Cats and dogs!");
  return bm25;
}

TEST(Bm25, StemmingMapsInflectionsToOneTerm) {
  Bm25Index stemmed({0.9f, 0.4f, true});
  EXPECT_THAT(stemmed.analyze("Cats running"), ElementsAre("cat", "run"));
  Bm25Index plain;
  EXPECT_THAT(plain.analyze("Cats running"), ElementsAre("cats", "running"));
}

// N = 3, lengths 3, 6, 3, avgdl = 4, k1 = 0.9, b = 0.4.
// idf(cat) = ln(1 + 2.5/1.5), idf(sat) = ln(1 + 1.5/2.5);
// doc 0: (idf(cat) + idf(sat)) * 1.9 / (1 + 0.9 * (0.6 + 0.4 * 3/4)) = 1.52297374
// doc 1: idf(sat) * 1.9 / (1 + 0.9 * (0.6 + 0.4 * 6/4))             = 0.42933024
TEST(Bm25, MatchesHandComputedScores) {
  const Bm25Index bm25 = three_documents();
  const auto hits = bm25.search("cat sat", 10);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].slot, 0);
  EXPECT_NEAR(hits[0].score, 1.5229737, 1e-5);
  EXPECT_EQ(hits[1].slot, 1);
  EXPECT_NEAR(hits[1].score, 0.4293302, 1e-5);
  const auto scores = bm25.score("cat sat", {2, 1, 0, 99});
  EXPECT_FLOAT_EQ(scores[0], 0.0f);
  EXPECT_NEAR(scores[1], 0.4293302, 1e-5);
  EXPECT_NEAR(scores[2], 1.5229737, 1e-5);
  EXPECT_FLOAT_EQ(scores[3], 0.0f);
}

TEST(Bm25, StanceReferenceParametersChangeTheScore) {
  const Bm25Index bm25 = three_documents({1.5f, 0.75f, false});
  EXPECT_NEAR(bm25.search("cat sat", 1)[0].score, 1.6347413, 1e-5);
}

TEST(Bm25, StemmedScoresCountCatsAsCat) {
  const Bm25Index bm25 = three_documents({0.9f, 0.4f, true});
  const auto all = bm25.score_all("cat sat");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_NEAR(all[0], 0.9867480, 1e-5);  // both terms now have df 2
  EXPECT_NEAR(all[1], 0.4293302, 1e-5);
  EXPECT_NEAR(all[2], 0.4933740, 1e-5);
}

TEST(Bm25, RemovedDocumentsLeaveStatisticsAndResults) {
  Bm25Index bm25 = three_documents();
  bm25.add(3, "a completely unrelated text");
  bm25.remove(3);
  EXPECT_EQ(bm25.size(), 3u);
  EXPECT_NEAR(bm25.search("cat sat", 1)[0].score, 1.5229737, 1e-5);  // same N and avgdl as before
  bm25.remove(0);
  const auto hits = bm25.search("cat sat", 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].slot, 1);
  EXPECT_THROW(bm25.remove(0), InvalidArgument);
  EXPECT_THROW(bm25.add(1, "again"), InvalidArgument);
}

TEST(Bm25, TopKIsTruncatedAndTiesGoToTheLowerSlot) {
  Bm25Index bm25;
  bm25.add(5, "same words");
  bm25.add(2, "same words");
  bm25.add(7, "other");
  const auto hits = bm25.search("same", 1);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].slot, 2);
  EXPECT_TRUE(bm25.search("absent", 3).empty());
  EXPECT_THROW(bm25.search("same", 0), InvalidArgument);
}

TEST(Bm25, RejectsInvalidParameters) {
  EXPECT_THROW(Bm25Index({-0.1f, 0.4f, false}), InvalidArgument);
  EXPECT_THROW(Bm25Index({0.9f, 1.5f, false}), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::index
