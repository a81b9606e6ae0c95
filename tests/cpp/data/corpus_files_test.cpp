#include "counterpoint/data/corpus_files.h"

#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"
#include "counterpoint/data/metadata.h"
#include "test_files.h"

using namespace counterpoint;
using namespace counterpoint::data;
using counterpoint::testing_support::fixture;
using counterpoint::testing_support::scratch_file;
using counterpoint::testing_support::corrupt_message;

TEST(JsonlDocuments, AcceptsIdOrUnderscoreIdAndOptionalTitle) {
  std::vector<Document> docs = load_jsonl_documents(fixture("passages.jsonl"));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].id, "p1");
  EXPECT_EQ(docs[0].title, "");
  EXPECT_EQ(docs[0].text, "First passage.");
  EXPECT_EQ(docs[1].id, "2");
  EXPECT_EQ(docs[1].title, "T");
}

TEST(JsonlDocuments, BothIdFieldsOnOneLineAreAmbiguous) {
  std::string path = scratch_file("both.jsonl", "{\"id\": \"a\", \"_id\": \"b\", \"text\": \"x\"}\n");
  EXPECT_EQ(corrupt_message([&] { load_jsonl_documents(path); }),
            path + ":1: both \"id\" and \"_id\" given; keep one");
}

TEST(TsvDocuments, SplitsOnTheFirstTabOnly) {
  std::vector<Document> docs = load_tsv_documents(fixture("passages.tsv"));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].id, "p1");
  EXPECT_EQ(docs[0].text, "First passage.");
  EXPECT_EQ(docs[1].text, "Second\twith a tab.");
}

// A header row used to be indexed as a document with id "id".
TEST(TsvDocuments, AHeaderRowIsSkippedNotIndexed) {
  for (const std::string header : {"id\ttext", "_id\ttext", "DOC_ID\tText", "docid\ttext"}) {
    const auto docs = load_tsv_documents(scratch_file("header.tsv", header + "\np1\tFirst.\np2\tSecond.\n"));
    ASSERT_EQ(docs.size(), 2u) << header;
    EXPECT_EQ(docs[0].id, "p1");
  }
  // Only the first line can be a header: a later "id<TAB>text" line is a document.
  const auto docs = load_tsv_documents(scratch_file("later.tsv", "p1\tFirst.\nid\ttext\n"));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1].id, "id");
}

TEST(TsvDocuments, BadLinesAreCorruptFileWithLineNumbers) {
  std::string no_tab = scratch_file("notab.tsv", "a\tok\r\nno tab here\r\n");
  EXPECT_EQ(corrupt_message([&] { load_tsv_documents(no_tab); }),
            no_tab + ":2: expected id<TAB>text, found no tab");
  std::string dup = scratch_file("dup.tsv", "a\tx\n\na\ty\n");
  EXPECT_EQ(corrupt_message([&] { load_tsv_documents(dup); }), dup + ":3: duplicate id \"a\"");
  std::string bad_utf8 = scratch_file("bad.tsv", "a\t\xFF\n");
  EXPECT_EQ(corrupt_message([&] { load_tsv_documents(bad_utf8); }),
            bad_utf8 + ":1: invalid UTF-8 at byte 3 of the line");
  EXPECT_TRUE(load_tsv_documents(scratch_file("empty.tsv", "")).empty());
  EXPECT_THROW(load_tsv_documents(fixture("absent.tsv")), FileNotFound);
}

TEST(Metadata, MapsIdToTheRemainingFields) {
  std::map<std::string, nlohmann::json> metadata = load_metadata(fixture("metadata.jsonl"));
  ASSERT_EQ(metadata.size(), 2u);
  EXPECT_EQ(metadata.at("c1"), (nlohmann::json{{"topic_id", "1"}, {"stance", "pro"}}));
  EXPECT_EQ(metadata.at("c2").at("stance"), "con");
}

TEST(Metadata, DuplicateIdIsCorruptFile) {
  std::string path = scratch_file("dup.jsonl", "{\"_id\": 1}\n{\"id\": \"1\"}\n");
  EXPECT_EQ(corrupt_message([&] { load_metadata(path); }), path + ":2: duplicate id \"1\"");
}
