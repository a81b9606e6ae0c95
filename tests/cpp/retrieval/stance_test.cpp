// What stance a query asks for, read from its instruction, and what Es reads of it.
#include "counterpoint/retrieval/stance.h"

#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"

using namespace counterpoint;
using namespace counterpoint::retrieval;

TEST(ReadStance, AnAttackInstructionAsksForAttackAndEsReadsTheClaimAlone) {
  const auto r = read_stance("Find an argument attacking the claim: We should ban boxing");
  EXPECT_EQ(r.stance, Stance::kAttack);
  EXPECT_TRUE(r.from_instruction);
  EXPECT_EQ(r.instruction, "Find an argument attacking the claim:");
  EXPECT_EQ(r.claim, "We should ban boxing");
}

TEST(ReadStance, ASupportInstructionAsksForSupport) {
  const auto r = read_stance("Show me a point that backs this up:   We should ban boxing ");
  EXPECT_EQ(r.stance, Stance::kSupport);
  EXPECT_EQ(r.instruction, "Show me a point that backs this up:");
  EXPECT_EQ(r.claim, "We should ban boxing");
  EXPECT_EQ(read_stance("Which argument supports this position? Boxing is safe").claim, "Boxing is safe");
  EXPECT_EQ(read_stance("Give evidence for: Boxing is safe").stance, Stance::kSupport);
  EXPECT_EQ(read_stance("please retrieve a claim in favour of: Boxing is safe").stance, Stance::kSupport);
}

TEST(ReadStance, ForNamesSupportOnlyAfterEvidenceArgumentsOrTheLike) {
  EXPECT_EQ(read_stance("Look for arguments against: Boxing is safe").stance, Stance::kAttack);
  EXPECT_EQ(read_stance("Argue for the motion: Boxing is safe").stance, Stance::kSupport);
  const auto both = read_stance("Find evidence for and against: Boxing is safe");
  EXPECT_FALSE(both.from_instruction);
  EXPECT_EQ(both.claim, "Find evidence for and against: Boxing is safe");
  for (const std::string q : {"What are the benefits of exercise for children?", "Get me results for: vaccines",
                              "Return the best matching passage for: vaccines"}) {
    EXPECT_FALSE(read_stance(q).from_instruction) << q;
  }
}

// "do not agree with" might mean attack, "isn't against" support: neither is guessed.
TEST(ReadStance, ANegatedRequestAndWordsThatMerelyContainAStanceWordAreNotRead) {
  for (const std::string q : {"Find arguments that do not agree with: X", "Find arguments that don't support: X",
                              "Find an argument that isn't against: X", "Find the counterpart of: X",
                              "What is the objective of: the treaty", "Find the agreement text: X"}) {
    const auto r = read_stance(q);
    EXPECT_FALSE(r.from_instruction) << q;
    EXPECT_EQ(r.stance, Stance::kAttack) << q;
    EXPECT_EQ(r.claim, q);
  }
}

TEST(ReadStance, EmbeddingModelInstructionFormatsAreRead) {
  const auto e5 = read_stance("Instruct: Given a claim, find documents that support it\nQuery: Boxing is safe");
  EXPECT_EQ(e5.stance, Stance::kSupport);
  EXPECT_EQ(e5.claim, "Boxing is safe");
  EXPECT_EQ(read_stance("Given a claim, retrieve documents that refute it: Boxing is safe").stance, Stance::kAttack);
  EXPECT_EQ(read_stance("Find evidence that proves: Boxing is safe").stance, Stance::kSupport);
  EXPECT_FALSE(read_stance("Instruct: retrieve passages that support it").from_instruction);  // no "Query:"
}

// A query without an instruction is SparseCL's contradiction search, and its whole text is the claim.
TEST(ReadStance, AQueryWithoutAnInstructionAsksForWhatContradictsIt) {
  for (const std::string q : {"A man is playing a guitar", "Support for the ban: it saves lives",
                              "Governments enable censorship to protect their citizens  What censorship is it "
                              "legitimate to undermine?",
                              "There is still a need for expertise: experts know", "Give background on: boxing"}) {
    const auto r = read_stance(q);
    EXPECT_EQ(r.stance, Stance::kAttack) << q;
    EXPECT_FALSE(r.from_instruction) << q;
    EXPECT_EQ(r.claim, q);
    EXPECT_EQ(r.instruction, "");
  }
}

TEST(ReadStance, AnInstructionTooLongOrWithNothingAfterItKeepsTheQueryAsTheClaim) {
  const std::string long_opening = "Find an argument against " + std::string(200, 'x') + ": y";
  EXPECT_FALSE(read_stance(long_opening).from_instruction);
  const auto bare = read_stance("Find an argument against:");
  EXPECT_EQ(bare.stance, Stance::kAttack);
  EXPECT_EQ(bare.claim, "Find an argument against:");
  // Unicode's no-break and ideographic spaces, and NUL, are blanks too.
  for (const std::string& blank : {std::string("\xC2\xA0"), std::string("\xE3\x80\x80"), std::string(1, '\0')}) {
    EXPECT_EQ(read_stance("Find an argument supporting the claim:" + blank).claim,
              "Find an argument supporting the claim:" + blank);
    EXPECT_EQ(read_stance("Find an argument supporting the claim:" + blank + "X" + blank).claim, "X");
  }
}

TEST(ReadStance, AGivenStanceIsTakenAsToldAndTheWholeQueryIsTheClaim) {
  const std::string query = "Find an argument attacking the claim: We should ban boxing";
  const auto r = read_stance(query, Stance::kSupport);
  EXPECT_EQ(r.stance, Stance::kSupport);
  EXPECT_TRUE(r.given);
  EXPECT_FALSE(r.from_instruction);
  EXPECT_EQ(r.claim, query);
  EXPECT_EQ(r.instruction, "");
  EXPECT_EQ(r.describe(), "support (given)");
}

TEST(ReadStance, NamesParseBothWaysAndAnUnknownOneListsTheChoices) {
  for (Stance s : {Stance::kFromQuery, Stance::kAttack, Stance::kSupport}) EXPECT_EQ(parse_stance(to_string(s)), s);
  EXPECT_EQ(parse_stance("Support"), Stance::kSupport);  // any case, as the other option names
  try {
    parse_stance("against");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "unknown stance 'against' (expected from-query, attack or support)");
  }
  try {
    parse_stance("suport");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "unknown stance 'suport' (expected from-query, attack or support); did you mean 'support'?");
  }
  EXPECT_EQ(sparsity_direction(Stance::kAttack), 1.0f);
  EXPECT_EQ(sparsity_direction(Stance::kSupport), -1.0f);
  EXPECT_THROW(sparsity_direction(Stance::kFromQuery), InvalidArgument);
}

TEST(ResolveStance, AReadingWinsThenTheRequestThenAttack) {
  EXPECT_EQ(resolve_stance(Stance::kSupport, Stance::kAttack), Stance::kSupport);
  EXPECT_EQ(resolve_stance(Stance::kFromQuery, Stance::kSupport), Stance::kSupport);
  EXPECT_EQ(resolve_stance(Stance::kFromQuery, Stance::kFromQuery), Stance::kAttack);
}

TEST(ReadStance, AnInstructionWithDigitsOrNonAsciiLettersIsReadByWholeWords) {
  EXPECT_EQ(read_stance("Find 2 arguments against: Boxing is safe").stance, Stance::kAttack);
  EXPECT_EQ(read_stance("Find 2 arguments against: Boxing is safe").claim, "Boxing is safe");
  const auto accented = read_stance("Find an argument against the café: X");
  EXPECT_EQ(accented.stance, Stance::kAttack);
  EXPECT_EQ(accented.claim, "X");
}

TEST(ReadStance, AnInstructionThatIsNotUtf8IsRefusedAsTheTokenizersWould) {
  try {
    read_stance("Find an argument against caf\xE9: X");
    FAIL() << "invalid UTF-8 was read";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "a query's text is not valid UTF-8 (byte offset 28)");
  }
  // Past the instruction the claim is the encoder's to check.
  EXPECT_EQ(read_stance("Find an argument against: caf\xE9").claim, "caf\xE9");
}

