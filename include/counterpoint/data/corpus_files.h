// counterpoint/data/corpus_files.h: plain corpora outside BEIR layout, for users who bring only
// a list of texts. JSONL lines {"id" or "_id", "text", "title"?} or TSV lines id<TAB>text.
#pragma once

#include <string>
#include <vector>

#include "counterpoint/data/beir.h"

namespace counterpoint::data {

// JSONL corpus in file order. The id is "id" or "_id" (a line with both throws), a string or an
// integer as in jsonl_id; "title" is optional. Duplicate ids throw CorruptFile "file:line: ...".
std::vector<Document> load_jsonl_documents(const std::string& path);

// TSV corpus in file order: the id is everything before the first tab, the text everything
// after it (later tabs stay in the text). A first line that is a header ("id<TAB>text",
// "_id<TAB>text", "doc_id<TAB>text", "docid<TAB>text", any case) is skipped, never indexed as a
// document. Titles are empty. A line without a
// tab, an empty id or a duplicate id throws CorruptFile "file:line: ...".
std::vector<Document> load_tsv_documents(const std::string& path);

// Where every face reads "a corpus" from: a BEIR directory (its corpus.jsonl), a .tsv corpus, or
// a .jsonl corpus (any other name is read as JSONL).
std::vector<Document> load_documents(const std::string& path);

// Where every face reads "queries" from: a BEIR queries.jsonl (a .jsonl name), or a text file
// with one query per line (blank lines skipped; ids q1, q2, ... by line order among the queries).
// Invalid UTF-8 or a NUL byte throws CorruptFile "file:line: ...".
std::vector<Query> load_query_file(const std::string& path);

}  // namespace counterpoint::data
