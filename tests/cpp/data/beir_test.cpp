#include "counterpoint/data/beir.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "test_files.h"

using namespace counterpoint;
using namespace counterpoint::data;
using counterpoint::test_support::fixture;
using counterpoint::test_support::scratch_file;
using counterpoint::test_support::corrupt_message;

TEST(BeirCorpus, ReadsBomCrlfBlankLinesIntegerIdsAndMissingTitle) {
  std::vector<Document> corpus = load_corpus(fixture("beir_mini/corpus.jsonl"));
  ASSERT_EQ(corpus.size(), 3u);
  EXPECT_EQ(corpus[0].id, "d1");
  EXPECT_EQ(corpus[0].title, "Cats");
  EXPECT_EQ(corpus[0].text, "Cats purr.");
  EXPECT_EQ(corpus[1].title, "");
  EXPECT_EQ(corpus[2].id, "3");
  EXPECT_EQ(corpus[2].title, "");
  EXPECT_EQ(corpus[2].text, "Birds sing, caf\xC3\xA9 style.");
}

TEST(BeirCorpus, EncodingTextJoinsNonEmptyTitleWithOneSpace) {
  EXPECT_EQ(encoding_text(Document{"d1", "Cats", "Cats purr."}), "Cats Cats purr.");
  EXPECT_EQ(encoding_text(Document{"d2", "", "Dogs bark."}), "Dogs bark.");
}

TEST(BeirCorpus, DuplicateIdAndMissingTextAreCorruptFile) {
  std::string dup = scratch_file("dup.jsonl",
                                 "{\"_id\": \"a\", \"text\": \"x\"}\n{\"_id\": \"a\", \"text\": \"y\"}\n");
  EXPECT_EQ(corrupt_message([&] { load_corpus(dup); }), dup + ":2: duplicate id \"a\"");
  std::string no_text = scratch_file("notext.jsonl", "{\"_id\": \"a\", \"title\": \"x\"}\n");
  EXPECT_EQ(corrupt_message([&] { load_corpus(no_text); }), no_text + ":1: missing field \"text\"");
}

TEST(BeirCorpus, MissingFileIsFileNotFoundAndEmptyFileIsEmpty) {
  EXPECT_THROW(load_corpus(fixture("beir_mini/absent.jsonl")), FileNotFound);
  EXPECT_TRUE(load_corpus(scratch_file("empty.jsonl", "")).empty());
  EXPECT_TRUE(load_queries(scratch_file("empty_q.jsonl", "")).empty());
  EXPECT_TRUE(load_qrels(scratch_file("empty.tsv", "")).empty());
}

TEST(BeirQueries, KeepsOtherFieldsAsExtra) {
  std::vector<Query> queries = load_queries(fixture("beir_mini/queries.jsonl"));
  ASSERT_EQ(queries.size(), 2u);
  EXPECT_EQ(queries[0].id, "q1");
  EXPECT_EQ(queries[0].text, "Do cats purr?");
  EXPECT_EQ(queries[0].extra, (nlohmann::json{{"topic_id", "7"}, {"stance", "support"}}));
  EXPECT_EQ(queries[1].extra, nlohmann::json::object());
}

TEST(BeirQrels, ReadsTsvWithHeaderKeepingZeroGrades) {
  Qrels qrels = load_qrels(fixture("beir_mini/qrels/dev.tsv"));
  EXPECT_EQ(qrels, (Qrels{{"q1", {{"d1", 2}, {"3", 0}}}, {"q2", {{"d2", 1}}}}));
}

TEST(BeirQrels, ReadsHeaderlessThreeColumnsAndTrecFourColumns) {
  EXPECT_EQ(load_qrels(fixture("headerless_qrels.tsv")), (Qrels{{"q1", {{"d1", 1}, {"d2", 0}}}}));
  EXPECT_EQ(load_qrels(fixture("trec_qrels.txt")),
            (Qrels{{"q1", {{"d1", 2}, {"d3", 1}}}, {"q2", {{"d2", 0}}}}));
}

TEST(BeirQrels, DuplicatePairNamesBothLines) {
  std::string path = scratch_file("dup.tsv", "query-id\tcorpus-id\tscore\nq\td\t1\nq\te\t1\nq\td\t2\n");
  EXPECT_EQ(corrupt_message([&] { load_qrels(path); }),
            path + ":4: duplicate judgement for query \"q\", document \"d\" (first on line 2)");
}

TEST(BeirQrels, NonIntegerGradeIsCorruptEvenOnTheFirstLine) {
  std::string first = scratch_file("first.tsv", "q\td\t1.5\n");
  EXPECT_EQ(corrupt_message([&] { load_qrels(first); }),
            first + ":1: relevance grade \"1.5\" is not an integer");
  std::string later = scratch_file("later.tsv", "query-id\tcorpus-id\tscore\nq\td\tscore\n");
  EXPECT_EQ(corrupt_message([&] { load_qrels(later); }),
            later + ":2: relevance grade \"score\" is not an integer");
  std::string fields = scratch_file("fields.tsv", "q\td\n");
  EXPECT_EQ(corrupt_message([&] { load_qrels(fields); }),
            fields + ":1: expected 3 fields (query-id corpus-id score) or 4 (TREC: qid iteration "
                     "docid grade), got 2");
}

TEST(BeirDatasetLoader, ListsTsvSplitsWithoutLoadingThem) {
  BeirDataset dataset = load_beir(fixture("beir_mini"));
  EXPECT_EQ(dataset.corpus.size(), 3u);
  EXPECT_EQ(dataset.queries.size(), 2u);
  EXPECT_EQ(dataset.splits, (std::vector<std::string>{"dev", "train"}));
  EXPECT_EQ(qrels_path(fixture("beir_mini"), "train"), fixture("beir_mini/qrels/train.tsv"));
  EXPECT_THROW(load_beir(fixture("no_such_dataset")), FileNotFound);
}

// Issue 28: an empty corpus ran with 0 documents, and qrels beside corpus.jsonl gave no split
// without a word.
TEST(BeirDatasetLoader, EmptyCorpusOrQueriesAreErrorsAndMissingQrelsWarnWhenExpected) {
  const std::string dir = ::testing::TempDir() + "cp_beir_empty_and_qrels_beside";
  std::filesystem::create_directories(dir);
  write_file_atomic(dir + "/corpus.jsonl", "");
  write_file_atomic(dir + "/queries.jsonl", "{\"_id\": \"q1\", \"text\": \"Q\"}\n");
  try {
    load_beir(dir);
    ADD_FAILURE() << "an empty corpus was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "corpus " + dir + "/corpus.jsonl holds no documents");
  }
  write_file_atomic(dir + "/corpus.jsonl", "{\"_id\": \"d1\", \"text\": \"D\"}\n");
  write_file_atomic(dir + "/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n");
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(load_beir(dir).splits.empty());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");  // judgements not asked for: no word
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(load_beir(dir, /*expect_qrels=*/true).splits.empty());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "counterpoint: warning: " + dir + " has no judgements: BEIR keeps them in " + dir +
                "/qrels/<split>.tsv; move test.tsv there\n");
  write_file_atomic(dir + "/queries.jsonl", "");
  EXPECT_THROW(load_beir(dir), InvalidArgument);
}

// Counts from the shared data's README.md; skipped where the shared data is not mounted.
// The README's "queries with qrels" column counts judgement lines: SICK dev has 164 judgements
// over 160 distinct queries (some sentences contradict two others), ArguAna train 2,015 over 2,013.
namespace {
const std::string kSharedData = counterpoint::test_support::shared_data_dir();

std::size_t judgement_count(const Qrels& qrels) {
  std::size_t count = 0;
  for (const auto& [query, docs] : qrels) count += docs.size();
  return count;
}
}  // namespace

TEST(BeirSharedData, ArguanaCountsMatchTheDatasetCard) {
  if (!path_exists(kSharedData + "/arguana/corpus.jsonl")) GTEST_SKIP() << "no shared data";
  BeirDataset arguana = load_beir(kSharedData + "/arguana");
  EXPECT_EQ(arguana.corpus.size(), 8565u);
  Qrels dev = load_qrels(qrels_path(kSharedData + "/arguana", "dev"));
  EXPECT_EQ(judgement_count(dev), 973u);
  EXPECT_EQ(dev.size(), 973u);
  Qrels train = load_qrels(qrels_path(kSharedData + "/arguana", "train"));
  EXPECT_EQ(judgement_count(train), 2015u);
  EXPECT_EQ(train.size(), 2013u);
}

TEST(BeirSharedData, SickCountsMatchTheDatasetCard) {
  if (!path_exists(kSharedData + "/sick/corpus.jsonl")) GTEST_SKIP() << "no shared data";
  BeirDataset sick = load_beir(kSharedData + "/sick");
  EXPECT_EQ(sick.corpus.size(), 6076u);
  Qrels dev = load_qrels(qrels_path(kSharedData + "/sick", "dev"));
  EXPECT_EQ(judgement_count(dev), 164u);
  EXPECT_EQ(dev.size(), 160u);
  Qrels train = load_qrels(qrels_path(kSharedData + "/sick", "train"));
  EXPECT_EQ(judgement_count(train), 1513u);
  EXPECT_EQ(train.size(), 1362u);
}

TEST(BeirSharedData, IbmClaimStanceCountsMatchTheDatasetCard) {
  if (!path_exists(kSharedData + "/ibm-claim-stance/corpus.jsonl")) GTEST_SKIP() << "no shared data";
  BeirDataset ibm = load_beir(kSharedData + "/ibm-claim-stance");
  EXPECT_EQ(ibm.corpus.size(), 2394u);
  EXPECT_EQ(ibm.queries.size(), 110u);
  EXPECT_EQ(ibm.queries[0].extra.at("stance"), "support");
}
