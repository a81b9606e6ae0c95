#include "counterpoint/data/corpus_files.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "counterpoint/core/errors.h"
#include "counterpoint/data/metadata.h"
#include "test_files.h"

using namespace counterpoint;
using namespace counterpoint::data;
using counterpoint::test_support::fixture;
using counterpoint::test_support::scratch_file;
using counterpoint::test_support::corrupt_message;

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

// Issue 28: a CSV, TSV with a header, or plain-text corpus is read where a corpus is, chosen by
// its extension; a parse error names the formats expected.
TEST(CorpusFormats, CsvWithAHeaderFollowsRfc4180Quoting) {
  const std::string path = scratch_file(
      "corpus.CSV",
      "\xEF\xBB\xBFtitle,_id,text\r\n"
      "T1,d1,\"Commas, \"\"quotes\"\" and\r\ntwo lines.\"\r\n"
      ",d2,Plain text.\r\n");
  const auto docs = load_documents(path);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].id, "d1");
  EXPECT_EQ(docs[0].title, "T1");
  EXPECT_EQ(docs[0].text, "Commas, \"quotes\" and\ntwo lines.");
  EXPECT_EQ(docs[1].id, "d2");
  EXPECT_EQ(docs[1].title, "");
  EXPECT_EQ(docs[1].text, "Plain text.");
}

TEST(CorpusFormats, CsvErrorsNameTheLineAndTheFormats) {
  const std::string formats = std::string(" (a corpus is ") + kCorpusFormats + ")";
  const std::string headless = scratch_file("headless.csv", "d1,First.\n");
  EXPECT_EQ(corrupt_message([&] { load_documents(headless); }),
            headless +
                ":1: expected a header row naming the columns id (or _id) and text, optionally title; found "
                "\"d1,First.\"" + formats);
  const std::string wide = scratch_file("wide.csv", "id,text\nd1,one, two\n");
  EXPECT_EQ(corrupt_message([&] { load_documents(wide); }),
            wide + ":2: 3 fields, the header names 2 (quote a field holding commas: \"a, b\")" + formats);
  const std::string open = scratch_file("open.csv", "id,text\nd1,\"never closed\nd2,x\n");
  EXPECT_EQ(corrupt_message([&] { load_documents(open); }), open + ":2: a quoted field is never closed" + formats);
  const std::string dup = scratch_file("dup.csv", "id,text\nd1,x\nd1,y\n");
  EXPECT_EQ(corrupt_message([&] { load_documents(dup); }), dup + ":3: duplicate id \"d1\"" + formats);
}

// "id,text,query" used to index the query column (the last text-like name won) and "id,docid,text"
// the docid one: a header naming two columns of one kind is refused, the columns named.
TEST(CorpusFormats, AHeaderNamingTwoColumnsOfOneKindIsRefused) {
  const std::string formats = std::string(" (a corpus is ") + kCorpusFormats + ")";
  const std::string texts = scratch_file("texts.csv", "id,text,query\nd1,Water boils.,what boils\n");
  EXPECT_EQ(corrupt_message([&] { load_documents(texts); }),
            texts + ":1: the header names 2 text columns (text, query): keep one, or rename the others" + formats);
  const std::string ids = scratch_file("ids.tsv", "id\tdocid\ttext\nq1\td9\tWater boils.\n");
  EXPECT_EQ(corrupt_message([&] { load_documents(ids); }),
            ids + ":1: the header names 2 id columns (id, docid): keep one, or rename the others" + formats);
}

TEST(CorpusFormats, TsvWithAHeaderReadsItsColumnsInAnyOrder) {
  const auto docs = load_documents(scratch_file("titled.tsv", "text\tTitle\tid\nFirst.\tT\tp1\nSecond.\t\tp2\n"));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].id, "p1");
  EXPECT_EQ(docs[0].title, "T");
  EXPECT_EQ(docs[0].text, "First.");
  EXPECT_EQ(docs[1].id, "p2");
  const std::string short_row = scratch_file("short.tsv", "text\ttitle\tid\nFirst.\tp1\n");
  EXPECT_EQ(corrupt_message([&] { load_tsv_documents(short_row); }), short_row + ":2: 2 fields, the header names 3");
}

TEST(CorpusFormats, PlainTextIsOneDocumentPerLineIdentifiedByItsLineNumber) {
  const auto docs = load_documents(scratch_file("corpus.txt", "First passage.\n\nThird line, second document.\n"));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].id, "1");
  EXPECT_EQ(docs[0].text, "First passage.");
  EXPECT_EQ(docs[1].id, "3");
  EXPECT_EQ(docs[1].text, "Third line, second document.");
}

TEST(CorpusFormats, AJsonParseErrorNamesTheFormatsExpected) {
  const std::string csv_named_jsonl = scratch_file("corpus.jsonl", "id,text\nd1,x\n");
  const std::string message = corrupt_message([&] { load_documents(csv_named_jsonl); });
  EXPECT_EQ(message.rfind(csv_named_jsonl + ":1:", 0), 0u) << message;
  EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
  EXPECT_NE(message.find(std::string("(a corpus is ") + kCorpusFormats + ")"), std::string::npos) << message;
}

// Issue 28: an empty corpus or queries file used to index 0 documents (or search nothing) with exit 0.
TEST(EmptyInput, ACorpusOrQueriesFileWithoutRecordsIsAnError) {
  for (const std::string name : {"empty.jsonl", "empty.csv", "empty.tsv", "empty.txt"}) {
    const std::string path = scratch_file(name, name == "empty.csv" ? "id,text\n" : "\n");
    try {
      load_documents(path);
      ADD_FAILURE() << name << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), "corpus " + path + " holds no documents");
    }
  }
  for (const std::string name : {"queries.jsonl", "queries.txt"}) {
    const std::string path = scratch_file(name, "");
    try {
      load_query_file(path);
      ADD_FAILURE() << name << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), "queries file " + path + " holds no queries");
    }
  }
}

TEST(EmptyInput, AFolderWithoutCorpusJsonlSaysWhatACorpusIs) {
  const std::string folder = ::testing::TempDir() + "cp_corpus_folder_without_corpus_jsonl";
  std::filesystem::create_directories(folder);
  try {
    load_documents(folder);
    ADD_FAILURE() << "a folder without corpus.jsonl was accepted";
  } catch (const FileNotFound& e) {
    EXPECT_EQ(std::string(e.what()),
              "corpus " + folder + " is a folder without corpus.jsonl; a corpus is " + kCorpusFormats);
  }
}

// A .csv or .tsv queries file was read as raw lines: its header became a query and every query
// was encoded with its id in front ("q1,Water boils ...").
TEST(QueryFiles, CsvAndTsvQueriesAreReadByTheirColumnsLikeACorpus) {
  const std::string csv = scratch_file("queries.csv", "id,text\nq01,\"Water boils, slowly.\"\nq02,Ice floats.\n");
  const std::string tsv = scratch_file("queries.tsv", "q01\tWater boils, slowly.\nq02\tIce floats.\n");
  for (const std::string& path : {csv, tsv}) {
    const std::vector<Query> queries = load_query_file(path);
    ASSERT_EQ(queries.size(), 2u) << path;
    EXPECT_EQ(queries[0].id, "q01");
    EXPECT_EQ(queries[0].text, "Water boils, slowly.");
    EXPECT_EQ(queries[1].id, "q02");
    EXPECT_EQ(queries[1].text, "Ice floats.");
  }
  const std::string named = scratch_file("named.tsv", "qid\tquery\nq01\tIce floats.\n");
  ASSERT_EQ(load_query_file(named).size(), 1u);
  EXPECT_EQ(load_query_file(named)[0].id, "q01");
  EXPECT_EQ(load_query_file(named)[0].text, "Ice floats.");
  const std::string plain = scratch_file("queries.txt", "id,text\nWater boils.\n");
  EXPECT_EQ(load_query_file(plain)[0].text, "id,text");  // any other name: one query per line, as it says
}

TEST(QueryFiles, AQueriesTableWithATitleColumnIsRefused) {
  const std::string path = scratch_file("titled.csv", "id,title,text\nq1,T,Water boils.\n");
  EXPECT_EQ(corrupt_message([&] { load_query_file(path); }),
            path + ": query 'q1' has a title; a queries file has the columns id and text");
}
