#include "counterpoint/data/corpus_files.h"

#include <cctype>
#include <set>
#include <utility>

#include "counterpoint/core/files.h"
#include "counterpoint/data/jsonl.h"
#include "line_reader.h"

namespace counterpoint::data {

std::vector<Document> load_jsonl_documents(const std::string& path) {
  std::vector<Document> corpus;
  std::set<std::string> seen;
  for_each_jsonl(path, [&](const nlohmann::json& value, std::size_t line) {
    require_jsonl_object(value, path, line);
    const bool has_id = value.contains("id");
    const bool has_underscore_id = value.contains("_id");
    if (has_id && has_underscore_id) {
      detail::throw_line_error(path, line, "both \"id\" and \"_id\" given; keep one");
    }
    Document document;
    document.id = jsonl_id(value, has_id ? "id" : "_id", path, line);
    document.title = jsonl_optional_string(value, "title", path, line);
    document.text = jsonl_string(value, "text", path, line);
    if (!seen.insert(document.id).second) {
      detail::throw_line_error(path, line, "duplicate id \"" + document.id + "\"");
    }
    corpus.push_back(std::move(document));
  });
  return corpus;
}

namespace {

// A first line that names the columns, as the TSV corpora of BEIR and MS MARCO tools write them.
bool is_tsv_header(std::string_view line) {
  std::string lower(line);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* header : {"id\ttext", "_id\ttext", "doc_id\ttext", "docid\ttext"}) {
    if (lower == header) return true;
  }
  return false;
}

}  // namespace

std::vector<Document> load_tsv_documents(const std::string& path) {
  const std::string bytes = read_file(path);
  std::vector<Document> corpus;
  std::set<std::string> seen;
  bool first = true;
  for (const detail::NumberedLine& line : detail::split_lines(bytes)) {
    if (detail::is_blank(line.text)) continue;
    detail::require_text(line.text, path, line.number);
    if (std::exchange(first, false) && is_tsv_header(line.text)) continue;
    const std::size_t tab = line.text.find('\t');
    if (tab == std::string_view::npos) {
      detail::throw_line_error(path, line.number, "expected id<TAB>text, found no tab");
    }
    Document document;
    document.id = std::string(line.text.substr(0, tab));
    document.text = std::string(line.text.substr(tab + 1));
    if (document.id.empty()) detail::throw_line_error(path, line.number, "empty id");
    if (!seen.insert(document.id).second) {
      detail::throw_line_error(path, line.number, "duplicate id \"" + document.id + "\"");
    }
    corpus.push_back(std::move(document));
  }
  return corpus;
}

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::vector<Document> load_documents(const std::string& path) {
  const std::string beir_corpus = join_path(path, "corpus.jsonl");
  if (path_exists(beir_corpus)) return load_corpus(beir_corpus);
  if (ends_with(path, ".tsv")) return load_tsv_documents(path);
  return load_jsonl_documents(path);
}

std::vector<Query> load_query_file(const std::string& path) {
  if (ends_with(path, ".jsonl")) return load_queries(path);
  const std::string bytes = read_file(path);
  std::vector<Query> queries;
  for (const detail::NumberedLine& line : detail::split_lines(bytes)) {
    if (line.text.empty()) continue;
    detail::require_text(line.text, path, line.number);
    Query q;
    q.id = "q" + std::to_string(queries.size() + 1);
    q.text = std::string(line.text);
    queries.push_back(std::move(q));
  }
  return queries;
}

}  // namespace counterpoint::data
