#include "counterpoint/data/beir.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/jsonl.h"
#include "line_reader.h"

namespace counterpoint::data {
namespace {

enum class IntParse { kOk, kNotAnInteger, kOutOfRange };

IntParse parse_int(std::string_view text, int& value) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || end != text.data() + text.size()) return IntParse::kNotAnInteger;
  // An integer all the same ("2147483648" is one): only too large for a grade.
  if (error == std::errc::result_out_of_range) return IntParse::kOutOfRange;
  return error == std::errc() ? IntParse::kOk : IntParse::kNotAnInteger;
}

// "score" is a column name; "1.5" or "x1" is a malformed grade that must not be skipped silently.
bool looks_like_column_name(std::string_view field) {
  return field.find_first_of("0123456789") == std::string_view::npos;
}

void require_unique(std::set<std::string>& seen, const std::string& id, const std::string& path,
                    std::size_t line) {
  if (!seen.insert(id).second) detail::throw_line_error(path, line, "duplicate id \"" + id + "\"");
}

}  // namespace

std::string encoding_text(const Document& document) {
  if (document.title.empty()) return document.text;
  return document.title + " " + document.text;
}

namespace {

// One JSON object per line, each made into a record by `make`, ids unique: the discipline of
// corpus.jsonl and queries.jsonl.
template <typename Record, typename Make>
std::vector<Record> load_records(const std::string& path, Make make) {
  std::vector<Record> records;
  std::set<std::string> seen;
  for_each_jsonl(path, [&](const nlohmann::json& value, std::size_t line) {
    require_jsonl_object(value, path, line);
    Record record = make(value, line);
    require_unique(seen, record.id, path, line);
    records.push_back(std::move(record));
  });
  return records;
}

}  // namespace

std::vector<Document> load_corpus(const std::string& path) {
  return load_records<Document>(path, [&](const nlohmann::json& value, std::size_t line) {
    Document document;
    document.id = jsonl_id(value, "_id", path, line);
    document.title = jsonl_optional_string(value, "title", path, line);
    document.text = jsonl_string(value, "text", path, line);
    return document;
  });
}

std::vector<Query> load_queries(const std::string& path) {
  return load_records<Query>(path, [&](const nlohmann::json& value, std::size_t line) {
    Query query;
    query.id = jsonl_id(value, "_id", path, line);
    query.text = jsonl_string(value, "text", path, line);
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key() != "_id" && it.key() != "text") query.extra[it.key()] = it.value();
    }
    return query;
  });
}

Qrels load_qrels(const std::string& path) {
  const std::string bytes = read_file(path);
  Qrels qrels;
  std::map<std::pair<std::string, std::string>, std::size_t> first_line_of_pair;
  bool first_content_line = true;
  for (const detail::NumberedLine& line : detail::split_lines(bytes)) {
    if (detail::is_blank(line.text)) continue;
    detail::require_text(line.text, path, line.number);
    std::vector<std::string_view> fields = detail::split_fields(line.text);
    const bool may_be_header = first_content_line;
    first_content_line = false;
    if (fields.size() != 3 && fields.size() != 4) {
      detail::throw_line_error(path, line.number,
                               "expected 3 fields (query-id corpus-id score) or 4 (TREC: qid "
                               "iteration docid grade), got " +
                                   std::to_string(fields.size()));
    }
    int grade = 0;
    const IntParse parsed = parse_int(fields.back(), grade);
    if (parsed == IntParse::kOutOfRange) {
      detail::throw_line_error(path, line.number,
                               "relevance grade " + std::string(fields.back()) + " is out of range (grades are "
                               "integers from -2147483648 to 2147483647)");
    }
    if (parsed != IntParse::kOk) {
      if (may_be_header && looks_like_column_name(fields.back())) continue;
      detail::throw_line_error(path, line.number,
                               "relevance grade \"" + std::string(fields.back()) +
                                   "\" is not an integer");
    }
    std::string query_id(fields.front());
    std::string doc_id(fields[fields.size() == 3 ? 1 : 2]);
    if (query_id.empty() || doc_id.empty()) {
      detail::throw_line_error(path, line.number, "empty query or document id");
    }
    auto [it, inserted] = first_line_of_pair.emplace(std::make_pair(query_id, doc_id), line.number);
    if (!inserted) {
      detail::throw_line_error(path, line.number,
                               "duplicate judgement for query \"" + query_id + "\", document \"" +
                                   doc_id + "\" (first on line " + std::to_string(it->second) +
                                   ")");
    }
    qrels[query_id][doc_id] = grade;
  }
  return qrels;
}

std::string qrels_path(const std::string& dir, const std::string& split) {
  return join_path(join_path(dir, "qrels"), split + ".tsv");
}

namespace {

// The names of the .tsv files directly in `dir`, sorted.
std::vector<std::string> tsv_files_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".tsv") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

void require_beir_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_regular_file(dir, error)) {
    throw InvalidArgument(dir + " is a file; a BEIR dataset is a folder of corpus.jsonl, queries.jsonl and "
                                "qrels/<split>.tsv (a corpus file alone is read as a corpus: load_corpus, "
                                "index build --corpus)");
  }
  if (!fs::is_directory(dir, error)) throw FileNotFound("BEIR dataset directory not found: " + dir);
  for (const char* file : {"corpus.jsonl", "queries.jsonl"}) {
    if (!fs::is_regular_file(join_path(dir, file), error)) {
      throw FileNotFound("BEIR dataset " + dir + " has no " + file);
    }
  }
}

BeirDataset load_beir(const std::string& dir, bool expect_qrels) {
  namespace fs = std::filesystem;
  require_beir_folder(dir);
  BeirDataset dataset;
  const std::string corpus = join_path(dir, "corpus.jsonl"), queries = join_path(dir, "queries.jsonl");
  dataset.corpus = load_corpus(corpus);
  if (dataset.corpus.empty()) throw InvalidArgument("corpus " + corpus + " holds no documents");
  dataset.queries = load_queries(queries);
  if (dataset.queries.empty()) throw InvalidArgument("queries file " + queries + " holds no queries");
  for (const std::string& name : tsv_files_in(fs::path(dir) / "qrels")) {
    dataset.splits.push_back(fs::path(name).stem().string());
  }
  if (expect_qrels && dataset.splits.empty()) {
    std::string beside;
    for (const std::string& name : tsv_files_in(dir)) beside += (beside.empty() ? "" : ", ") + name;
    std::cerr << "counterpoint: warning: " << dir << " has no judgements: BEIR keeps them in "
              << join_path(join_path(dir, "qrels"), "<split>.tsv")
              << (beside.empty() ? "" : "; move " + beside + " there") << "\n";
  }
  return dataset;
}

}  // namespace counterpoint::data
