// Every reader of the data layer ends a line at LF or CRLF, or at a lone CR in a file without LF
// (classic Mac OS): a CR-only file gives the lines an editor shows, not one line holding all of them (issue #62: a CR-only
// corpus.tsv was "indexed 1", a CR-only queries .txt gave one query).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "counterpoint/data/beir.h"
#include "counterpoint/data/corpus_files.h"
#include "counterpoint/data/run.h"
#include "counterpoint/data/tsv.h"
#include "test_files.h"

using namespace counterpoint;
using namespace counterpoint::data;
using counterpoint::test_support::corrupt_message;
using counterpoint::test_support::scratch_file;

namespace {

// `lf_text` (lines ending in LF) with each LF replaced by `ending`.
std::string with_line_ending(const std::string& lf_text, const std::string& ending) {
  std::string text;
  for (char c : lf_text) text += c == '\n' ? ending : std::string(1, c);
  return text;
}

const std::vector<std::pair<std::string, std::string>> kEndings = {{"lf", "\n"}, {"crlf", "\r\n"}, {"cr", "\r"}};

std::vector<std::pair<std::string, std::string>> ids_and_texts(const std::vector<Document>& documents) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Document& d : documents) out.emplace_back(d.id, d.text);
  return out;
}

std::vector<std::pair<std::string, std::string>> ids_and_texts(const std::vector<Query>& queries) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Query& q : queries) out.emplace_back(q.id, q.text);
  return out;
}

}  // namespace

TEST(LineEndings, TheIssuesCrOnlyTsvCorpusHasTwoDocuments) {
  const std::string path = scratch_file("c.tsv", "id\ttext\rd1\ta dog\rd2\ta cat\r");
  EXPECT_EQ(ids_and_texts(load_documents(path)),
            (std::vector<std::pair<std::string, std::string>>{{"d1", "a dog"}, {"d2", "a cat"}}));
}

TEST(LineEndings, EveryCorpusFormatReadsLfCrlfAndCrOnlyFilesAlike) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"tsv", "id\ttext\nd1\ta dog\nd2\ta cat\n"},
      {"csv", "id,text\nd1,a dog\nd2,\"a cat\"\n"},
      {"jsonl", "{\"id\": \"d1\", \"text\": \"a dog\"}\n{\"id\": \"d2\", \"text\": \"a cat\"}\n"},
      {"txt", "a dog\na cat\n"},
  };
  for (const auto& [extension, lf_text] : files) {
    const std::string first_id = extension == "txt" ? "1" : "d1", second_id = extension == "txt" ? "2" : "d2";
    for (const auto& [name, ending] : kEndings) {
      const std::string path = scratch_file(name + "." + extension, with_line_ending(lf_text, ending));
      EXPECT_EQ(ids_and_texts(load_documents(path)),
                (std::vector<std::pair<std::string, std::string>>{{first_id, "a dog"}, {second_id, "a cat"}}))
          << name << " " << extension;
    }
  }
}

TEST(LineEndings, EveryQueriesFormatReadsLfCrlfAndCrOnlyFilesAlike) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"tsv", "qid\tquery\nq1\tis it a dog\nq2\tis it a cat\n"},
      {"csv", "id,text\nq1,is it a dog\nq2,is it a cat\n"},
      {"jsonl", "{\"_id\": \"q1\", \"text\": \"is it a dog\"}\n{\"_id\": \"q2\", \"text\": \"is it a cat\"}\n"},
      {"txt", "is it a dog\nis it a cat\n"},
  };
  for (const auto& [extension, lf_text] : files) {
    for (const auto& [name, ending] : kEndings) {
      const std::string path = scratch_file(name + "." + extension, with_line_ending(lf_text, ending));
      EXPECT_EQ(ids_and_texts(load_query_file(path)),
                (std::vector<std::pair<std::string, std::string>>{{"q1", "is it a dog"}, {"q2", "is it a cat"}}))
          << name << " " << extension;
    }
  }
}

TEST(LineEndings, QrelsRunsAndTriplesReadLfCrlfAndCrOnlyFilesAlike) {
  for (const auto& [name, ending] : kEndings) {
    const std::string qrels = scratch_file(name + "_qrels.tsv", with_line_ending("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n", ending));
    EXPECT_EQ(load_qrels(qrels), (Qrels{{"q1", {{"d1", 1}, {"d2", 0}}}})) << name;

    const std::string run = scratch_file(name + ".trec", with_line_ending("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 0.5 t\n", ending));
    EXPECT_EQ(read_trec_run(run), (RankedRun{{"q1", {{"d1", 2.5f}, {"d2", 0.5f}}}})) << name;

    const std::string triples = scratch_file(name + "_triples.tsv", with_line_ending("a1\tp1\tn1\na2\tp2\tn2\n", ending));
    const std::vector<TsvRow> rows = read_tsv(triples);
    ASSERT_EQ(rows.size(), 2u) << name;
    EXPECT_EQ(rows[1].fields, (std::vector<std::string>{"a2", "p2", "n2"})) << name;
    EXPECT_EQ(rows[1].line, 2u) << name;
  }
}

// Line numbers in messages count CR-only lines, also inside a quoted CSV field that spans lines;
// the line break inside such a field is kept as LF, as a CRLF one is.
TEST(LineEndings, ErrorsInACrOnlyFileNameTheLineAnEditorShows) {
  const std::string tsv = scratch_file("notab.tsv", "a\tok\rno tab here\r");
  EXPECT_EQ(corrupt_message([&] { load_tsv_documents(tsv); }), tsv + ":2: expected id<TAB>text, found no tab");

  const std::string csv = scratch_file("multi.csv", "id,text\rd1,\"two\rlines\"\rd1,again\r");
  EXPECT_EQ(corrupt_message([&] { load_csv_documents(csv); }), csv + ":4: duplicate id \"d1\"");
  const std::string good_csv = scratch_file("good.csv", "id,text\rd1,\"two\rlines\"\rd2,\"three\rmore\"\r");
  EXPECT_EQ(ids_and_texts(load_csv_documents(good_csv)),
            (std::vector<std::pair<std::string, std::string>>{{"d1", "two\nlines"}, {"d2", "three\nmore"}}));

  const std::string jsonl = scratch_file("bad.jsonl", "{\"id\": \"d1\", \"text\": \"x\"}\r{\"id\": \"d2\"}\r");
  EXPECT_EQ(corrupt_message([&] { load_jsonl_documents(jsonl); }), jsonl + ":2: missing field \"text\"");
}

// A file's line ending is chosen once: a stray CR inside a line of a file whose lines end at LF is
// text, as it always was, and never cuts the passage or query in two.
TEST(LineEndings, AStrayCrInAFileOfLfLinesStaysInItsLine) {
  const std::string tsv = scratch_file("stray.tsv", "id\ttext\nd1\ta dog\rbarks\r\nd2\ta cat\n");
  EXPECT_EQ(ids_and_texts(load_documents(tsv)),
            (std::vector<std::pair<std::string, std::string>>{{"d1", "a dog\rbarks"}, {"d2", "a cat"}}));
  const std::string csv = scratch_file("stray.csv", "id,text\nd1,\"a dog\rbarks\"\nd2,a cat\n");
  EXPECT_EQ(ids_and_texts(load_documents(csv)),
            (std::vector<std::pair<std::string, std::string>>{{"d1", "a dog\rbarks"}, {"d2", "a cat"}}));
}

// A CR inside a JSON string is written escaped ("\r"), so JSON Lines keep it in the text.
TEST(LineEndings, AnEscapedCrInAJsonlStringStaysInTheText) {
  const std::string path = scratch_file("escaped.jsonl", "{\"id\": \"d1\", \"text\": \"old\\rmac\"}\n");
  EXPECT_EQ(load_jsonl_documents(path).at(0).text, "old\rmac");
}
