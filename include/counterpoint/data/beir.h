// counterpoint/data/beir.h: datasets in BEIR layout — corpus.jsonl ({"_id", "title", "text"}),
// queries.jsonl ({"_id", "text", any other fields}) and qrels/<split>.tsv. No split is ever
// required: test qrels may be held back, so callers always pass a qrels path explicitly.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace counterpoint::data {

struct Document {
  std::string id;
  std::string title;  // "" when the file has no title (or null)
  std::string text;
};

struct Query {
  std::string id;
  std::string text;
  nlohmann::json extra = nlohmann::json::object();  // every field except "_id" and "text"
};

// query id -> document id -> relevance grade (0 = judged non-relevant).
using Qrels = std::map<std::string, std::map<std::string, int>>;

// The text a document is encoded from, as BEIR does it: title + " " + text when the title is
// non-empty, otherwise the text alone.
std::string encoding_text(const Document& document);

// corpus.jsonl in file order. Ids follow jsonl_id (string or integer); a duplicate id, a
// missing "_id" or "text", or a non-string title/text throws CorruptFile "file:line: ...".
std::vector<Document> load_corpus(const std::string& path);

// queries.jsonl in file order; same id rules as load_corpus.
std::vector<Query> load_queries(const std::string& path);

// Qrels in any of three layouts, one judgement per line:
//   BEIR TSV with header   query-id <TAB> corpus-id <TAB> score
//   3 columns, no header   qid docid grade
//   TREC 4 columns         qid iteration docid grade
// Fields are tab-separated when the line has a tab, otherwise space-separated. A header is
// recognised only on the first non-blank line (its last field holds no digit, like "score").
// Grades must be integers. A (query, document) pair listed twice throws CorruptFile naming both lines.
Qrels load_qrels(const std::string& path);

struct BeirDataset {
  std::vector<Document> corpus;
  std::vector<Query> queries;
  std::vector<std::string> splits;  // names of qrels/*.tsv without extension, sorted
};

// That `dir` is a BEIR folder holding corpus.jsonl and queries.jsonl, checked without reading them:
// InvalidArgument for a file (a corpus file alone is no data set), FileNotFound for a missing
// folder or file. load_beir checks it first; so do the commands that take --dataset.
void require_beir_folder(const std::string& dir);

// Loads <dir>/corpus.jsonl and <dir>/queries.jsonl and lists the qrels splits present. A corpus
// or queries file without records is InvalidArgument. No split is fine unless `expect_qrels`: then
// a warning on stderr says where BEIR keeps judgements (qrels/<split>.tsv) and names any .tsv
// files found beside corpus.jsonl instead. Load a split's judgements with
// load_qrels(qrels_path(dir, split)).
BeirDataset load_beir(const std::string& dir, bool expect_qrels = false);
std::string qrels_path(const std::string& dir, const std::string& split);

}  // namespace counterpoint::data
