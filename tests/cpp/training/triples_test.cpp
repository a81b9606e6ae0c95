#include "counterpoint/training/triples.h"
#include "counterpoint/text/inversion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/beir.h"

namespace counterpoint::training {
namespace {

const std::string kFixtures = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/training";
// The real data sets; tests that need them are skipped on machines without them.
const std::string kData = std::string(COUNTERPOINT_SOURCE_DIR) + "/../shared/data";

#define REQUIRE_DATA(set)                                                         \
  if (!path_exists(kData + "/" set + "/corpus.jsonl")) {                          \
    GTEST_SKIP() << "data set " << kData << "/" set << " is not on this machine"; \
  }

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = std::string(COUNTERPOINT_BINARY_DIR) + "/" + name;
  write_file_atomic(path, content);
  return path;
}

std::unordered_set<std::string> query_texts(const std::string& dir, const std::string& split) {
  const auto qrels = data::load_qrels(data::qrels_path(dir, split));
  std::unordered_set<std::string> texts;
  for (const auto& q : data::load_queries(dir + "/queries.jsonl"))
    if (qrels.count(q.id)) texts.insert(q.text);
  return texts;
}

bool same(const std::vector<Triple>& a, const std::vector<Triple>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].anchor != b[i].anchor || a[i].positive != b[i].positive || a[i].negatives != b[i].negatives ||
        a[i].group != b[i].group)
      return false;
  }
  return true;
}

TEST(TsvTriples, ReadsThreeOrFourColumnsAndToleratesCrlf) {
  const auto triples = load_tsv_triples(kFixtures + "/triples.tsv");
  ASSERT_EQ(triples.size(), 2u);
  EXPECT_EQ(triples[0].anchor, "a dog is running");
  EXPECT_EQ(triples[0].positive, "a dog is not running");
  EXPECT_EQ(triples[0].negatives, std::vector<std::string>{"a dog runs"});
  EXPECT_EQ(triples[0].group, "dog");
  EXPECT_EQ(triples[1].group, "");
}

TEST(TsvTriples, MalformedLinesNameFileAndLine) {
  const auto path = write_temp("training_bad_triples.tsv", "a\tb\tc\nonly\ttwo\n");
  try {
    load_tsv_triples(path);
    FAIL() << "expected CorruptFile";
  } catch (const CorruptFile& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_tsv_triples(write_temp("training_empty_field.tsv", "a\t\tc\n")), CorruptFile);
  EXPECT_THROW(load_tsv_triples(kFixtures + "/no_such_file.tsv"), FileNotFound);
}

TEST(BuildTriples, DispatchesOnTheDataKindAndNamesWhatASourceLacks) {
  TripleSource tsv;
  tsv.triple_files = {kFixtures + "/triples.tsv", kFixtures + "/triples.tsv"};
  const auto twice = build_triples(tsv);
  ASSERT_EQ(twice.size(), 4u);
  EXPECT_TRUE(same({twice[2], twice[3]}, load_tsv_triples(kFixtures + "/triples.tsv")));
  for (const auto data : {TripleData::kTsv, TripleData::kArguAna, TripleData::kSick, TripleData::kStance}) {
    EXPECT_EQ(parse_triple_data(to_string(data)), data);
  }
  EXPECT_THROW(parse_triple_data("squad"), InvalidArgument);
  TripleSource sick;
  sick.data = TripleData::kSick;
  sick.dataset = kData + "/sick";
  try {
    build_triples(sick);
    FAIL() << "SICK triples without a pairs file";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sick triples need a pairs file"), std::string::npos) << e.what();
  }
  TripleSource arguana;
  arguana.data = TripleData::kArguAna;
  arguana.dataset = kData + "/arguana";
  EXPECT_THROW(build_triples(arguana), InvalidArgument);  // no qrels
}

TEST(DevTask, EachAnchorIsAQueryWhosePositiveIsItsOneRelevantDocument) {
  const std::vector<Triple> triples = {{"a", "not a", {"b"}, ""}, {"c", "not c", {"not a"}, ""}};
  const eval::RetrievalTask task = dev_task(triples);
  EXPECT_EQ(task.query_ids, (std::vector<std::string>{"q0", "q1"}));
  EXPECT_EQ(task.query_texts, (std::vector<std::string>{"a", "c"}));
  // "not a" is the positive of q0 and a negative of q1: one document.
  EXPECT_EQ(task.doc_texts, (std::vector<std::string>{"not a", "b", "not c"}));
  EXPECT_EQ(task.doc_ids, (std::vector<std::string>{"d0", "d1", "d2"}));
  EXPECT_EQ(task.qrels.at("q0"), (std::map<std::string, int>{{"d0", 1}}));
  EXPECT_EQ(task.qrels.at("q1"), (std::map<std::string, int>{{"d2", 1}}));
}

TEST(SickTriples, PrefersAnEntailedSentenceThenTheMostRelatedNeutralOneAsHardNegative) {
  const auto triples = sick_triples(kFixtures + "/sick_pairs.tsv", kFixtures + "/sick_corpus.jsonl");
  ASSERT_EQ(triples.size(), 2u);  // the one contradiction, in both directions
  std::map<std::string, Triple> by_anchor;
  for (const auto& t : triples) by_anchor[t.anchor] = t;
  const Triple& sleeping = by_anchor.at("A cat is sleeping");
  EXPECT_EQ(sleeping.positive, "A cat is not sleeping");
  EXPECT_EQ(sleeping.negatives, std::vector<std::string>{"An animal is sleeping"});
  EXPECT_EQ(sleeping.group, "s1");
  const Triple& awake = by_anchor.at("A cat is not sleeping");
  EXPECT_EQ(awake.positive, "A cat is sleeping");
  EXPECT_EQ(awake.negatives, std::vector<std::string>{"A cat is on a sofa"});
  EXPECT_EQ(awake.group, "s2");
}

TEST(StanceTemplates, HeldOutInstructionsAreNeverUsedInTraining) {
  std::set<std::string> training;
  for (const auto& t : training_stance_templates()) training.insert({t.support, t.attack});
  EXPECT_GE(training_stance_templates().size(), 3u);
  for (const auto& t : held_out_stance_templates()) {
    EXPECT_FALSE(training.count(t.support)) << t.support;
    EXPECT_FALSE(training.count(t.attack)) << t.attack;
  }
  const StanceTemplate instruction{"Find an argument supporting the claim: ", "Find an argument attacking the claim: "};
  EXPECT_EQ(stance_query(instruction, "attack", "School uniforms"),
            "Find an argument attacking the claim: School uniforms");
  EXPECT_THROW(stance_query(instruction, "neutral", "x"), InvalidArgument);
  EXPECT_THROW(parse_stance_curriculum("random"), InvalidArgument);
}

TEST(RemoveTriplesMentioning, DropsTriplesWhoseAnchorOrPositiveIsListed) {
  std::vector<Triple> triples = {{"a", "b", {"c"}, ""}, {"d", "a", {"e"}, ""}, {"f", "g", {"a"}, ""}};
  EXPECT_EQ(remove_triples_mentioning(triples, {"a"}), 2u);
  ASSERT_EQ(triples.size(), 1u);
  EXPECT_EQ(triples[0].anchor, "f");
}

TEST(ArguAnaTriples, OneTriplePerTrainPairWithNegativesFromTheSameDebateAndSide) {
  REQUIRE_DATA("arguana");
  const std::string dir = kData + "/arguana";
  ArguAnaTripleOptions options;
  options.negatives_per_anchor = 2;
  const auto triples = arguana_triples(dir, dir + "/qrels/train.tsv", dir + "/metadata.jsonl", options);
  EXPECT_EQ(triples.size(), 2015u);
  std::set<std::string> debates;
  for (const auto& t : triples) {
    ASSERT_EQ(t.negatives.size(), 2u);
    EXPECT_NE(t.negatives[0], t.negatives[1]);
    EXPECT_NE(t.negatives[0], t.positive);
    EXPECT_NE(t.negatives[0], t.anchor);
    debates.insert(t.group);
  }
  EXPECT_GT(debates.size(), 100u);
  // No dev query is a training anchor or positive.
  const auto dev = query_texts(dir, "dev");
  auto copy = triples;
  EXPECT_EQ(remove_triples_mentioning(copy, dev), 0u);
  EXPECT_TRUE(same(triples, arguana_triples(dir, dir + "/qrels/train.tsv", dir + "/metadata.jsonl", options)));
  options.seed = 7;
  EXPECT_FALSE(same(triples, arguana_triples(dir, dir + "/qrels/train.tsv", dir + "/metadata.jsonl", options)));
}

TEST(SickTriples, OneTriplePerDirectedContradictionAndDevQueriesCanBeExcluded) {
  REQUIRE_DATA("sick");
  const std::string dir = kData + "/sick";
  auto triples = sick_triples(dir + "/pairs_train.tsv", dir + "/corpus.jsonl");
  EXPECT_EQ(triples.size(), 1521u);
  for (const auto& t : triples) {
    ASSERT_EQ(t.negatives.size(), 1u);
    EXPECT_NE(t.negatives[0], t.positive);
    EXPECT_EQ(t.group.rfind("s", 0), 0u) << "group should be a corpus id: " << t.group;
  }
  EXPECT_TRUE(same(triples, sick_triples(dir + "/pairs_train.tsv", dir + "/corpus.jsonl")));
  // SICK's official train split shares sentences with its dev queries; they must be removed.
  const auto dev = query_texts(dir, "dev");
  EXPECT_GT(remove_triples_mentioning(triples, dev), 0u);
  for (const auto& t : triples) EXPECT_FALSE(dev.count(t.anchor)) << t.anchor;
}

TEST(ClaimStanceTriples, CurriculaDrawTheRequestedNegativeKinds) {
  REQUIRE_DATA("ibm-claim-stance");
  const std::string dir = kData + "/ibm-claim-stance";
  // claim text -> (topic, stance in query terms); a few texts are listed under several topics
  // and are left out of the checks below as ambiguous.
  std::map<std::string, std::pair<std::string, std::string>> claim;
  std::set<std::string> ambiguous;
  const auto corpus = data::load_corpus(dir + "/corpus.jsonl");
  std::map<std::string, std::string> text_of;
  for (const auto& d : corpus) text_of[d.id] = d.text;
  std::ifstream meta(dir + "/metadata.jsonl");
  for (std::string line; std::getline(meta, line);) {
    auto j = nlohmann::json::parse(line);
    const std::pair<std::string, std::string> label = {j["topic_id"], j["stance"] == "pro" ? "support" : "attack"};
    const auto& text = text_of[j["_id"]];
    if (claim.count(text) && claim[text] != label) ambiguous.insert(text);
    claim[text] = label;
  }
  std::set<std::string> test_topics;
  for (const auto& q : data::load_queries(dir + "/queries.jsonl"))
    if (q.extra["split"] == "test") test_topics.insert(q.extra["topic_id"].get<std::string>());

  enum Kind { kHard = 0, kSemiHard = 1, kEasy = 2, kNone = 3 };
  auto kind_of = [&](const Triple& t) {
    const auto& [pos_topic, pos_stance] = claim.at(t.positive);
    const auto& [neg_topic, neg_stance] = claim.at(t.negatives.at(0));
    if (neg_topic == pos_topic && neg_stance != pos_stance) return kHard;
    if (neg_topic != pos_topic && neg_stance == pos_stance) return kSemiHard;
    if (neg_topic != pos_topic && neg_stance != pos_stance) return kEasy;
    return kNone;
  };

  StanceTripleOptions options;
  options.count = 300;
  options.curriculum = StanceCurriculum::kMixed;
  const auto mixed = claim_stance_triples(dir, dir + "/qrels/train.tsv", dir + "/metadata.jsonl", options);
  ASSERT_EQ(mixed.size(), 300u);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < mixed.size(); ++i) {
    const Triple& t = mixed[i];
    EXPECT_FALSE(test_topics.count(claim.at(t.positive).first) || test_topics.count(claim.at(t.negatives[0]).first))
        << "test topic leaked";
    if (ambiguous.count(t.positive) || ambiguous.count(t.negatives[0])) continue;
    ++checked;
    EXPECT_EQ(claim.at(t.positive).first, t.group);
    EXPECT_EQ(kind_of(t), Kind(i % 3)) << "triple " << i << " should be hard, semi-hard, easy in turn";
  }
  EXPECT_GT(checked, 250u);

  options.curriculum = StanceCurriculum::kHomogeneous;
  for (const auto& t : claim_stance_triples(dir, dir + "/qrels/train.tsv", dir + "/metadata.jsonl", options)) {
    if (ambiguous.count(t.positive) || ambiguous.count(t.negatives[0])) continue;
    EXPECT_EQ(kind_of(t), kHard);
  }
  EXPECT_TRUE(same(mixed, claim_stance_triples(dir, dir + "/qrels/train.tsv", dir + "/metadata.jsonl",
                                               StanceTripleOptions{StanceCurriculum::kMixed, 300})));
}

// 300 triples of the training topics under `curriculum` (seeded, so two calls draw the same).
std::vector<Triple> training_topic_triples(StanceCurriculum curriculum) {
  const std::string dir = kData + "/ibm-claim-stance";
  return claim_stance_triples(dir, dir + "/qrels/train.tsv", dir + "/metadata.jsonl",
                              StanceTripleOptions{curriculum, 300});
}

TEST(ClaimStanceTriples, InvertedCurriculumIsTheMixedOneWithEachInvertiblePositiveAsAnExtraNegative) {
  REQUIRE_DATA("ibm-claim-stance");
  const auto mixed = training_topic_triples(StanceCurriculum::kMixed);
  const auto inverted = training_topic_triples(StanceCurriculum::kInverted);
  const text::Inverter inverter;
  std::size_t next = 0, copies = 0;
  for (const Triple& t : mixed) {
    ASSERT_LT(next, inverted.size());
    EXPECT_TRUE(same({t}, {inverted[next++]})) << "the mixed triples come first, in order";
    const auto inversion = inverter.invert(t.positive);
    if (!inversion) continue;
    ASSERT_LT(next, inverted.size());
    const Triple& copy = inverted[next++];
    EXPECT_EQ(copy.anchor, t.anchor);
    EXPECT_EQ(copy.positive, t.positive);
    EXPECT_EQ(copy.group, t.group);
    EXPECT_THAT(copy.negatives, ::testing::ElementsAre(inversion->text));
    ++copies;
  }
  EXPECT_EQ(next, inverted.size());
  EXPECT_GT(copies, 240u) << "most claims take one of the stance edits";
  EXPECT_EQ(parse_stance_curriculum("inverted"), StanceCurriculum::kInverted);
}

TEST(ClaimStanceTriples, InvertedBothAddsEachInvertibleHardNegativeAsAPositive) {
  REQUIRE_DATA("ibm-claim-stance");
  const auto mixed = training_topic_triples(StanceCurriculum::kMixed);
  const auto both = training_topic_triples(StanceCurriculum::kInvertedBoth);
  const text::Inverter inverter;
  std::size_t next = 0, flipped = 0;
  for (std::size_t i = 0; i < mixed.size(); ++i) {
    const Triple& t = mixed[i];
    ASSERT_LT(next, both.size());
    EXPECT_TRUE(same({t}, {both[next++]})) << "each drawn triple, in order";
    if (const auto positive_edit = inverter.invert(t.positive)) {
      ASSERT_LT(next, both.size());
      EXPECT_THAT(both[next++].negatives, ::testing::ElementsAre(positive_edit->text)) << "then the inverted copy";
    }
    if (i % 3 != 0) continue;  // the mixed curriculum's hard negatives are every third draw
    const auto negative_edit = inverter.invert(t.negatives.at(0));
    if (!negative_edit) continue;
    ASSERT_LT(next, both.size());
    const Triple& copy = both[next++];
    EXPECT_EQ(copy.anchor, t.anchor);
    EXPECT_EQ(copy.positive, negative_edit->text);
    EXPECT_EQ(copy.negatives, t.negatives);
    EXPECT_EQ(copy.group, t.group);
    ++flipped;
  }
  EXPECT_EQ(next, both.size());
  EXPECT_GT(flipped, 80u) << "most of the 100 hard negatives take one of the stance edits";
  EXPECT_EQ(parse_stance_curriculum("inverted-both"), StanceCurriculum::kInvertedBoth);
  EXPECT_EQ(to_string(StanceCurriculum::kInvertedBoth), "inverted-both");
}

}  // namespace
}  // namespace counterpoint::training

namespace counterpoint::training {
namespace {

TEST(SickTriples, AFileWithNoSentenceLeftForANegativeIsRefusedNotLoopedOn) {
  const std::string path = write_temp(
      "sick_two_sentences.tsv",
      "pair_ID\tsentence_A\tsentence_B\tentailment_label\tentailment_AB\tentailment_BA\trelatedness_score\n"
      "1\tA cat sleeps\tNo cat sleeps\tCONTRADICTION\tA_contradicts_B\tB_contradicts_A\t4.0\n");
  EXPECT_THROW(sick_triples(path, kFixtures + "/sick_corpus.jsonl"), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::training
