// Near-miss data for map verifiers: which SICK sentences count as paraphrases and near-misses,
// which contradiction becomes each triple's negative, and the errors for unusable input.
#include "counterpoint/training/near_miss.h"

#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint::training {
namespace {

const std::string kData = std::string(COUNTERPOINT_SOURCE_DIR) + "/../shared/data";

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = std::string(COUNTERPOINT_BINARY_DIR) + "/" + name;
  write_file_atomic(path, content);
  return path;
}

const std::string kHeader =
    "pair_ID\tsentence_A\tsentence_B\tentailment_label\tentailment_AB\tentailment_BA\trelatedness_score\n";

// guitar -> instrument is a one-way entailment; slicing <-> cutting both ways; each anchor has a
// negated contradiction, "Nobody is slicing an onion" sharing fewer words with "cutting".
std::string pairs_file() {
  return write_temp("near_miss_pairs.tsv",
                    kHeader +
                        "1\tA man is playing a guitar\tA man is playing an instrument\tENTAILMENT\tA_entails_B\tB_neutral_A\t4.5\n"
                        "2\tA man is playing a guitar\tA man is not playing a guitar\tCONTRADICTION\tA_contradicts_B\tB_contradicts_A\t4.0\n"
                        "3\tA woman is slicing an onion\tNobody is slicing an onion\tCONTRADICTION\tA_contradicts_B\tB_contradicts_A\t3.9\n"
                        "4\tA woman is slicing an onion\tA woman is cutting an onion\tENTAILMENT\tA_entails_B\tB_entails_A\t4.9\n"
                        "5\tA man is playing an instrument\tA cat sleeps\tNEUTRAL\tA_neutral_B\tB_neutral_A\t1.0\n");
}

TEST(WordOverlap, JaccardOfLowerCasedWords) {
  EXPECT_DOUBLE_EQ(word_overlap("A man is playing", "A man is not playing"), 4.0 / 5.0);
  EXPECT_DOUBLE_EQ(word_overlap("The dog's bone.", "the DOG'S bone"), 1.0);
  EXPECT_DOUBLE_EQ(word_overlap("cat", "dog"), 0.0);
  EXPECT_DOUBLE_EQ(word_overlap("", "..."), 0.0);
}

TEST(NearMissTriples, EachEntailmentGetsTheMostOverlappingContradictionOfItsAnchor) {
  const auto triples = sick_near_miss_triples(pairs_file());
  ASSERT_EQ(triples.size(), 2u);
  EXPECT_EQ(triples[0].anchor, "A man is playing a guitar");
  EXPECT_EQ(triples[0].positive, "A man is playing an instrument");
  EXPECT_EQ(triples[0].negatives, std::vector<std::string>{"A man is not playing a guitar"});
  EXPECT_EQ(triples[0].group, "A man is playing a guitar");
  EXPECT_EQ(triples[1].anchor, "A woman is slicing an onion");
  EXPECT_EQ(triples[1].positive, "A woman is cutting an onion");
  EXPECT_EQ(triples[1].negatives, std::vector<std::string>{"Nobody is slicing an onion"});  // overlap 4/7
}

TEST(NearMissTriples, AContradictionOfWhatTheAnchorEntailsContradictsTheAnchorToo) {
  // "cutting" entails "slicing", which "Nobody is slicing an onion" contradicts; their overlap is
  // 3/8, so the triple appears only under a lower threshold.
  const auto triples = sick_near_miss_triples(pairs_file(), 0.3);
  ASSERT_EQ(triples.size(), 3u);
  EXPECT_EQ(triples[1].anchor, "A woman is cutting an onion");
  EXPECT_EQ(triples[1].positive, "A woman is slicing an onion");
  EXPECT_EQ(triples[1].negatives, std::vector<std::string>{"Nobody is slicing an onion"});
}

TEST(NearMissPairs, DirectedEntailmentsAreParaphrasesAndOverlappingContradictionsNearMisses) {
  const std::vector<LabeledPair> expected = {
      {"A man is not playing a guitar", "A man is playing a guitar", true},
      {"A man is playing a guitar", "A man is playing an instrument", false},
      {"A man is playing a guitar", "A man is not playing a guitar", true},
      {"A woman is cutting an onion", "A woman is slicing an onion", false},
      {"A woman is slicing an onion", "A woman is cutting an onion", false},
      {"A woman is slicing an onion", "Nobody is slicing an onion", true},
      {"Nobody is slicing an onion", "A woman is slicing an onion", true},
  };
  EXPECT_EQ(sick_near_miss_pairs(pairs_file()), expected);
  // Raising the threshold above 4/7 drops the "Nobody" contradictions.
  EXPECT_EQ(sick_near_miss_pairs(pairs_file(), 0.6).size(), expected.size() - 2);
}

TEST(NearMiss, BadInputIsRefusedWithTheReason) {
  EXPECT_THROW(sick_near_miss_triples(pairs_file(), 1.5), InvalidArgument);
  EXPECT_THROW(sick_near_miss_pairs(pairs_file(), -0.1), InvalidArgument);
  EXPECT_THROW(sick_near_miss_pairs(std::string(COUNTERPOINT_BINARY_DIR) + "/no_such_pairs.tsv"), FileNotFound);
  const std::string bad = write_temp("near_miss_bad.tsv", kHeader + "1\tA\tB\tX\tA_likes_B\tB_neutral_A\t1\n");
  EXPECT_THROW(sick_near_miss_pairs(bad), CorruptFile);
}

TEST(NearMiss, RealSickSplitsYieldHundredsOfTrainingTriples) {
  if (!path_exists(kData + "/sick/pairs_train.tsv")) GTEST_SKIP() << "SICK is not on this machine";
  const auto triples = sick_near_miss_triples(kData + "/sick/pairs_train.tsv");
  EXPECT_GT(triples.size(), 500u);
  for (const auto& t : triples) EXPECT_GE(word_overlap(t.anchor, t.negatives.at(0)), 0.5);
  std::size_t near_misses = 0;
  const auto dev = sick_near_miss_pairs(kData + "/sick/pairs_dev.tsv");
  for (const auto& p : dev) near_misses += p.near_miss;
  EXPECT_GT(near_misses, 100u);
  EXPECT_GT(dev.size() - near_misses, 200u);
}

TEST(NearMiss, InvertedNegativesFollowEachEditableTripleAndKeepItsGroup) {
  std::vector<Triple> triples = {{"A man is cutting a tomato.", "A person is slicing a tomato.", {"x"}, "g1"},
                                 {"!!!", "?", {"y"}, "g2"},
                                 {"A man is cutting a tomato.", "A man slices a tomato.", {"z"}, "g1"}};
  const text::Inverter inverter(text::InverterOptions{text::near_miss_edit_kinds()});
  EXPECT_EQ(add_inverted_negatives(triples, inverter), 2u);
  ASSERT_EQ(triples.size(), 5u);
  EXPECT_EQ(triples[0].negatives, std::vector<std::string>{"x"});
  EXPECT_EQ(triples[1].anchor, "A man is cutting a tomato.");
  EXPECT_EQ(triples[1].positive, "A person is slicing a tomato.");
  EXPECT_EQ(triples[1].negatives, std::vector<std::string>{"A tomato is cutting a man."});
  EXPECT_EQ(triples[1].group, "g1");
  EXPECT_EQ(triples[2].anchor, "!!!");  // nothing to edit: no copy
  EXPECT_EQ(triples[4].negatives, std::vector<std::string>{"A tomato is cutting a man."});
  std::vector<Triple> two_negatives = {{"It is good", "It is fine", {"a", "b"}, ""}};
  EXPECT_THROW(add_inverted_negatives(two_negatives, inverter), InvalidArgument);
}

// A refused call loses nothing: a triple without exactly one negative, even after editable ones,
// is found before any triple is moved out of the caller's list.
TEST(NearMiss, ARefusedInversionLeavesTheCallersTriplesAsTheyWere) {
  const std::vector<Triple> given = {{"A man is cutting a tomato.", "A person is slicing a tomato.", {"x"}, "g1"},
                                     {"It is good", "It is fine", {}, "g2"}};
  std::vector<Triple> triples = given;
  const text::Inverter inverter(text::InverterOptions{text::near_miss_edit_kinds()});
  EXPECT_THROW(add_inverted_negatives(triples, inverter), InvalidArgument);
  ASSERT_EQ(triples.size(), given.size());
  for (std::size_t i = 0; i < given.size(); ++i) {
    EXPECT_EQ(triples[i].anchor, given[i].anchor);
    EXPECT_EQ(triples[i].positive, given[i].positive);
    EXPECT_EQ(triples[i].negatives, given[i].negatives);
  }
}

// The stance curriculum's second direction: a flagged (hard) negative that inverts becomes the
// positive of a copy whose negative is the hard claim itself; unflagged negatives stay as they are.
TEST(NearMiss, FlaggedNegativesInvertedBecomePositivesOfACopy) {
  std::vector<Triple> triples = {
      {"Find an argument attacking the claim: games are good", "Games are harmful.", {"Games are useful."}, "t1"},
      {"Find an argument attacking the claim: games are good", "Games are harmful.", {"Taxes are useful."}, "t1"},
      {"Find an argument supporting the claim: games are good", "!!!", {"Games are harmful."}, "t1"}};
  const text::Inverter inverter;
  const std::vector<bool> hard = {true, false, true};
  EXPECT_EQ(add_inverted_negatives(triples, inverter, InvertedText::kPositive, &hard), 4u);
  ASSERT_EQ(triples.size(), 7u);
  const auto row = [&](std::size_t i) {
    return triples[i].positive + " | " + triples[i].negatives.at(0) + " | " + triples[i].group;
  };
  EXPECT_EQ(row(0), "Games are harmful. | Games are useful. | t1");
  EXPECT_EQ(row(1), "Games are harmful. | Games are harmless. | t1");  // the positive inverted, as "inverted"
  EXPECT_EQ(row(2), "Games are useless. | Games are useful. | t1");    // the hard negative inverted: a positive
  EXPECT_EQ(row(3), "Games are harmful. | Taxes are useful. | t1");
  EXPECT_EQ(row(4), "Games are harmful. | Games are harmless. | t1");  // not flagged: no second copy
  EXPECT_EQ(row(5), "!!! | Games are harmful. | t1");                  // nothing in "!!!" to invert
  EXPECT_EQ(row(6), "Games are harmless. | Games are harmful. | t1");
  EXPECT_EQ(triples[6].anchor, "Find an argument supporting the claim: games are good");
  const std::vector<bool> wrong_count = {true};
  EXPECT_THROW(add_inverted_negatives(triples, inverter, InvertedText::kPositive, &wrong_count), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::training
