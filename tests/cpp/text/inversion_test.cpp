// The inverter's edits, one exact output per rule, the order in which rules are tried, the
// refusals that keep it from writing nonsense, and its behaviour on bad input. WordNet comes from
// Debian's wordnet-base (installed by setup.sh), so the antonyms below are WordNet 3.0's.
#include "counterpoint/text/inversion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "counterpoint/core/errors.h"

namespace counterpoint::text {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Inversion invert_with(std::vector<EditKind> edits, const std::string& text) {
  const auto result = Inverter(InverterOptions{std::move(edits)}).invert(text);
  if (!result) throw std::runtime_error("no edit applied to: " + text);
  return *result;
}

TEST(Inverter, RemovesANegationWordOrUncontractsANegatedAuxiliary) {
  EXPECT_EQ(invert_with({EditKind::kNegationRemoved}, "Multiculturalism does not work."),
            (Inversion{"Multiculturalism does work.", EditKind::kNegationRemoved, "not", ""}));
  EXPECT_EQ(invert_with({EditKind::kNegationRemoved}, "Nuclear energy isn't safe"),
            (Inversion{"Nuclear energy is safe", EditKind::kNegationRemoved, "isn't", "is"}));
  EXPECT_EQ(invert_with({EditKind::kNegationRemoved}, "Cannot be trusted").text, "Can be trusted");
  EXPECT_EQ(invert_with({EditKind::kNegationRemoved}, "it should never be allowed").text, "it should be allowed");
  EXPECT_EQ(invert_with({EditKind::kNegationRemoved}, "Nuclear energy is not.").text, "Nuclear energy is.");
  EXPECT_EQ(invert_with({EditKind::kNegationRemoved}, "Not all taxes are fair").text, "All taxes are fair");
}

TEST(Inverter, SwapsARelationalVerbAndKeepsItsInflection) {
  EXPECT_EQ(invert_with({EditKind::kVerbAntonym}, "Violent video games increase aggression."),
            (Inversion{"Violent video games decrease aggression.", EditKind::kVerbAntonym, "increase", "decrease"}));
  EXPECT_EQ(invert_with({EditKind::kVerbAntonym}, "P.E. actually increases test scores").text,
            "P.E. actually decreases test scores");
  EXPECT_EQ(invert_with({EditKind::kVerbAntonym}, "Gambling supported crime").text, "Gambling opposed crime");
  EXPECT_EQ(invert_with({EditKind::kVerbAntonym}, "Subsidies are reducing poverty").text,
            "Subsidies are increasing poverty");
  // From WordNet rather than the table of relational verbs.
  EXPECT_EQ(invert_with({EditKind::kVerbAntonym}, "The side-effects are admitted").text,
            "The side-effects are denied");
}

TEST(Inverter, LeavesWordsThatReadAsNounsAndIrregularPastsAlone) {
  const Inverter verbs(InverterOptions{{EditKind::kVerbAntonym}});
  // WordNet's verb "right" has the antonym "wrong", but "rights" here is a noun.
  EXPECT_FALSE(verbs.invert("Parents have a basic human right to decide"));
  // "find" -> "lose", but "lose" has the irregular past "lost": no "losed".
  EXPECT_FALSE(verbs.invert("No evidence has found a link"));
}

TEST(Inverter, SwapsAPredicateAdjectiveForItsWordNetAntonym) {
  EXPECT_EQ(invert_with({EditKind::kAdjectiveAntonym}, "Affirmative action is good for society."),
            (Inversion{"Affirmative action is bad for society.", EditKind::kAdjectiveAntonym, "good", "bad"}));
  EXPECT_EQ(invert_with({EditKind::kAdjectiveAntonym}, "Democracy is the best form of government").text,
            "Democracy is the worst form of government");
  EXPECT_EQ(invert_with({EditKind::kAdjectiveAntonym}, "Substance abuse can be harmful").text,
            "Substance abuse can be harmless");
  // Without an auxiliary every adjective is a candidate; a capital keeps its capital.
  EXPECT_EQ(invert_with({EditKind::kAdjectiveAntonym}, "Effective policies exist").text, "Ineffective policies exist");
}

TEST(Inverter, RefusesClassAntonymsParticiplesAndAntonymsAlreadyInTheText) {
  const Inverter adjectives(InverterOptions{{EditKind::kAdjectiveAntonym}});
  EXPECT_FALSE(adjectives.invert("It causes political corruption"));            // -> "nonpolitical"
  EXPECT_FALSE(adjectives.invert("nations that are made of many parts"));       // participle "made"
  EXPECT_FALSE(adjectives.invert("Taxes should be cut"));                       // participle "cut", not "uncut"
  EXPECT_FALSE(adjectives.invert("both local and national rules"));             // names an antonym already
  EXPECT_FALSE(adjectives.invert("The Green Party"));                           // a capitalised name
}

TEST(Inverter, AddsNotAfterTheFirstAuxiliaryOrModal) {
  EXPECT_EQ(invert_with({EditKind::kNegationAdded}, "The sale of violent games should be banned"),
            (Inversion{"The sale of violent games should not be banned", EditKind::kNegationAdded, "", "not"}));
  EXPECT_EQ(invert_with({EditKind::kNegationAdded}, "Homeschooling is beneficial").text, "Homeschooling is not beneficial");
  EXPECT_EQ(invert_with({EditKind::kNegationAdded}, "Men can vote").text, "Men cannot vote");
  EXPECT_FALSE(Inverter(InverterOptions{{EditKind::kNegationAdded}}).invert("Video games develop intelligence"));
  // "did" without "not" is mostly a main verb: no "did not more".
  EXPECT_FALSE(Inverter(InverterOptions{{EditKind::kNegationAdded}}).invert("The army did more to protect civilians"));
}

TEST(Inverter, SwapsAContrastiveConnective) {
  EXPECT_EQ(invert_with({EditKind::kConnectiveSwap}, "It is cheap, but it fails").text, "It is cheap, and it fails");
  EXPECT_EQ(invert_with({EditKind::kConnectiveSwap}, "Although taxes rose, growth held").text,
            "Because taxes rose, growth held");
}

TEST(Inverter, SwapsSubjectAndObjectOnlyInTheUnambiguousPattern) {
  EXPECT_EQ(invert_with({EditKind::kRoleSwap}, "A man is cutting a tomato."),
            (Inversion{"A tomato is cutting a man.", EditKind::kRoleSwap, "A man|a tomato", "A tomato|a man"}));
  EXPECT_EQ(invert_with({EditKind::kRoleSwap}, "The young dog is chasing an old cat").text,
            "An old cat is chasing the young dog");
  const Inverter roles(InverterOptions{{EditKind::kRoleSwap}});
  EXPECT_FALSE(roles.invert("Two men are playing guitars"));           // plural: agreement would break
  EXPECT_FALSE(roles.invert("A man is cutting a tomato in the park"));  // a prepositional tail
  EXPECT_FALSE(roles.invert("A skilled man is playing a guitar on stage"));
  EXPECT_FALSE(roles.invert("A girl in pink is twirling a ribbon"));
  EXPECT_FALSE(roles.invert("A man is sleeping"));                      // no object
  EXPECT_FALSE(roles.invert("A man, happily, is cutting a tomato"));    // punctuation inside
}

TEST(Inverter, TriesTheKindsInTheGivenOrderAndEditsOnce) {
  // Negation removal comes first in the stance order, even though "safe" has an antonym.
  const auto stance = Inverter().invert("Nuclear energy is not safe");
  ASSERT_TRUE(stance);
  EXPECT_EQ(stance->kind, EditKind::kNegationRemoved);
  EXPECT_EQ(stance->text, "Nuclear energy is safe");
  const auto adjective_first =
      Inverter(InverterOptions{{EditKind::kAdjectiveAntonym, EditKind::kNegationRemoved}}).invert("Nuclear energy is not safe");
  ASSERT_TRUE(adjective_first);
  EXPECT_EQ(adjective_first->text, "Nuclear energy is not dangerous");
  EXPECT_THAT(stance_edit_kinds(),
              ElementsAre(EditKind::kNegationRemoved, EditKind::kVerbAntonym, EditKind::kAdjectiveAntonym,
                          EditKind::kNegationAdded, EditKind::kConnectiveSwap));
}

TEST(Inverter, IsDeterministicAndSafeAcrossThreads) {
  const Inverter inverter;
  const std::vector<std::string> texts = {"Violent video games increase aggression.", "Affirmative action is good",
                                          "It is not fair", "Taxes should be cut"};
  const auto expected = inverter.invert(texts);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) mismatches[t] += inverter.invert(texts) != expected;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ElementsAre(0, 0, 0, 0));
}

TEST(Inverter, EmptyAndUninvertibleTextsGiveNothingAndInvalidUtf8IsRefused) {
  const Inverter inverter;
  EXPECT_FALSE(inverter.invert(""));
  EXPECT_FALSE(inverter.invert(" \t\n"));
  EXPECT_FALSE(inverter.invert("!!! ???"));
  EXPECT_FALSE(inverter.invert("Video games develop the individual's intelligence"));
  try {
    inverter.invert(std::string("is \xff not", 8));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("byte offset 3"));
  }
  // A word far longer than WordNet's buffers is skipped, not passed to the library.
  EXPECT_FALSE(Inverter(InverterOptions{{EditKind::kAdjectiveAntonym}}).invert(std::string(5000, 'g')));
  EXPECT_THROW(Inverter(InverterOptions{{}}), InvalidArgument);
}

TEST(EditKind, NamesRoundTripAndUnknownNamesListTheValidOnes) {
  for (EditKind kind : all_edit_kinds()) EXPECT_EQ(parse_edit_kind(to_string(kind)), kind);
  try {
    parse_edit_kind("antonym");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("negation-removed, verb-antonym"));
  }
}

TEST(WordnetAntonyms, ReadsDirectAntonymsInSenseOrder) {
  EXPECT_THAT(wordnet_antonyms("good", "adjective"), ::testing::Contains("bad"));
  EXPECT_THAT(wordnet_antonyms("increase", "verb"), ::testing::Contains("decrease"));
  EXPECT_TRUE(wordnet_antonyms("xqzv", "adjective").empty());
  EXPECT_THROW(wordnet_antonyms("good", "noun"), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::text
