// counterpoint/data/corpus_files.h: plain corpora outside BEIR layout, for users who bring only
// a list of texts. JSONL lines {"id" or "_id", "text", "title"?}; CSV or TSV with a header row
// naming the columns id (or _id) and text, optionally title (TSV may also be id<TAB>text lines
// without a header); plain text, one document per line.
#pragma once

#include <string>
#include <vector>

#include "counterpoint/data/beir.h"

namespace counterpoint::data {

// JSONL corpus in file order. The id is "id" or "_id" (a line with both throws), a string or an
// integer as in jsonl_id; "title" is optional. Duplicate ids throw CorruptFile "file:line: ...".
std::vector<Document> load_jsonl_documents(const std::string& path);

// The corpus layouts load_documents reads, as every error and help text names them.
inline constexpr const char* kCorpusFormats =
    "a BEIR folder (corpus.jsonl), or a .jsonl, .csv (header: id,text[,title]), .tsv or .txt file "
    "(one document per line)";

// TSV corpus in file order. A first line naming the columns (id, _id, doc_id or docid, and text,
// optionally title, any case and order; queries' names qid, query_id, query-id and query are taken
// too, so that one reader serves both) is a header: every later line then holds one field per
// column, except that a last text column keeps later tabs. Without a header every line is
// id<TAB>text, the text being everything after the first tab. A line without a tab, an empty id
// or a duplicate id throws CorruptFile "file:line: ...".
std::vector<Document> load_tsv_documents(const std::string& path);

// CSV corpus (RFC 4180: comma-separated, fields with commas, quotes or line breaks quoted in
// double quotes, a quote inside one doubled) whose first row names the columns as for TSV.
// A missing header, a row with another number of fields than the header, an unterminated quote,
// an empty or duplicate id throws CorruptFile "file:line: ...".
std::vector<Document> load_csv_documents(const std::string& path);

// Plain-text corpus: every non-blank line is a document whose id is its line number in the file
// ("1", "2", ...: blank lines are skipped but keep their number), with no title.
std::vector<Document> load_text_documents(const std::string& path);

// Where every face reads "a corpus" from: a BEIR directory (its corpus.jsonl), or a file chosen
// by its extension, any case: .csv, .tsv, .txt, otherwise JSONL. A folder without corpus.jsonl
// is FileNotFound; a corpus without documents is InvalidArgument; a CorruptFile names
// kCorpusFormats.
std::vector<Document> load_documents(const std::string& path);

// Where every face reads "queries" from: a BEIR queries.jsonl (a .jsonl name); a .csv or .tsv with
// the columns of a corpus file (a header naming id and text, or qid / query_id / query-id and
// query; a .tsv may be bare id<TAB>text lines), a title refused; or any other text file with one
// query per line (blank lines skipped; ids q1, q2, ... by line order among the queries).
// Invalid UTF-8 or a NUL byte throws CorruptFile "file:line: ..."; a file without queries is
// InvalidArgument "<role> <path> holds no <items>", in the words of the caller that reads it (the
// trusted texts of `clean` are read as queries).
std::vector<Query> load_query_file(const std::string& path, const std::string& role = "queries file",
                                   const std::string& items = "queries");

}  // namespace counterpoint::data
