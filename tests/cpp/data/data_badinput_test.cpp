// Bad input to the data readers that the per-format tests do not already cover: NUL bytes,
// a file cut off mid-line, values that are not objects, integer overflow in grades and ranks,
// non-finite scores, empty ids in tab-separated runs, invalid UTF-8 in TSV corpora, and a
// directory where a file is expected.
#include <gtest/gtest.h>

#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/corpus_files.h"
#include "counterpoint/data/jsonl.h"
#include "counterpoint/data/run.h"
#include "test_files.h"

namespace counterpoint::data {
namespace {

using test_support::scratch_file;
using test_support::corrupt_message;

TEST(DataBadInput, NulByteInAJsonLineIsRefusedWithItsLineAndColumn) {
  const std::string path = scratch_file("nul.jsonl", std::string("{\"_id\": \"a\", \"text\": \"x\0y\"}\n", 28));
  EXPECT_EQ(corrupt_message([&] { load_corpus(path); }).rfind(path + ":1:24: NUL byte", 0), 0u);
}

// nlohmann's parser ends its input at a NUL: a second document after one was indexed silently.
TEST(DataBadInput, NulByteAfterACompleteJsonObjectDoesNotHideTheRest) {
  const std::string line = std::string("{\"_id\":\"a\",\"text\":\"x\"}\0{\"_id\":\"hidden\",\"text\":\"y\"}\n", 51);
  const std::string corpus = scratch_file("nul_corpus.jsonl", "{\"_id\":\"first\",\"text\":\"z\"}\n" + line);
  EXPECT_EQ(corrupt_message([&] { load_corpus(corpus); }).rfind(corpus + ":2:23: NUL byte", 0), 0u);
  const std::string queries = scratch_file("nul_queries.jsonl", line);
  EXPECT_EQ(corrupt_message([&] { load_queries(queries); }).rfind(queries + ":1:23: NUL byte", 0), 0u);
}

// Found by the JSONL fuzzer: a number too large for a double escaped as nlohmann's out_of_range.
TEST(DataBadInput, NumberOverflowInAJsonLineIsMalformed) {
  const std::string path = scratch_file("overflow.jsonl", "{\"_id\": \"a\", \"text\": \"x\", \"n\": 3e3333333}\n");
  EXPECT_EQ(corrupt_message([&] { load_corpus(path); }).rfind(path + ":1: not valid JSON", 0), 0u);
}

TEST(DataBadInput, FileCutOffMidLineNamesTheLastLine) {
  const std::string path = scratch_file("cut.jsonl", "{\"_id\": \"a\", \"text\": \"x\"}\n{\"_id\": \"b\", \"te");
  EXPECT_EQ(corrupt_message([&] { load_corpus(path); }).rfind(path + ":2:17: not valid JSON", 0), 0u);
}

TEST(DataBadInput, CorpusLinesMustBeObjects) {
  const std::string path = scratch_file("array.jsonl", "[\"a\", \"text\"]\n");
  EXPECT_NE(corrupt_message([&] { load_corpus(path); }).find(path + ":1: "), std::string::npos);
  const std::string number = scratch_file("number.jsonl", "42\n");
  EXPECT_NE(corrupt_message([&] { load_jsonl_documents(number); }).find(number + ":1: "), std::string::npos);
}

// 2147483648 is an integer, too large for a grade: said so, not "is not an integer".
TEST(DataBadInput, GradeBeyondIntIsOutOfRange) {
  for (const std::string grade : {"2147483648", "-2147483649", "99999999999999999999"}) {
    const std::string path = scratch_file("big.tsv", "q\td\t" + grade + "\n");
    EXPECT_EQ(corrupt_message([&] { load_qrels(path); }),
              path + ":1: relevance grade " + grade + " is out of range (grades are integers from -2147483648 to "
                                                      "2147483647)");
  }
  const std::string largest = scratch_file("largest.tsv", "q\td\t2147483647\n");
  EXPECT_EQ(load_qrels(largest).at("q").at("d"), 2147483647);
}

TEST(DataBadInput, RunRankBeyondLongAndNonFiniteScoresAreRejected) {
  const std::string rank = scratch_file("rank.trec", "q Q0 d 99999999999999999999999 0.5 t\n");
  EXPECT_EQ(corrupt_message([&] { read_trec_run(rank); }),
            rank + ":1: rank \"99999999999999999999999\" is not an integer");
  for (const std::string score : {"nan", "inf", "-inf", "1e39"}) {
    const std::string path = scratch_file("score.trec", "q Q0 d 1 " + score + " t\n");
    EXPECT_EQ(corrupt_message([&] { read_trec_run(path); }),
              path + ":1: score \"" + score + "\" is not a finite number");
  }
}

TEST(DataBadInput, EmptyIdsInATabSeparatedRunAreRejected) {
  const std::string doc = scratch_file("doc.trec", "q\tQ0\t\t1\t0.5\tt\n");
  EXPECT_EQ(corrupt_message([&] { read_trec_run(doc); }), doc + ":1: empty query or document id");
  const std::string query = scratch_file("query.trec", "q Q0 d 1 0.5 t\n\tQ0\td\t1\t0.5\tt\n");
  EXPECT_EQ(corrupt_message([&] { read_trec_run(query); }), query + ":2: empty query or document id");
}

TEST(DataBadInput, InvalidUtf8InATsvCorpusNamesLineAndByte) {
  const std::string path = scratch_file("latin1.tsv", "d1\tok\nd2\tcaf\xE9\n");
  EXPECT_EQ(corrupt_message([&] { load_tsv_documents(path); }), path + ":2: invalid UTF-8 at byte 7 of the line");
}

TEST(DataBadInput, DirectoryWhereAFileIsExpectedIsInvalidArgument) {
  try {
    load_corpus(::testing::TempDir());
    FAIL() << "a directory loaded as a corpus";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("expected a file, found a directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace counterpoint::data
