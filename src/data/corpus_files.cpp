#include "counterpoint/data/corpus_files.h"

#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/core/spelling.h"
#include "counterpoint/data/jsonl.h"
#include "counterpoint/data/tsv.h"
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

// A table's columns: which field holds the id, the text and (optionally) the title.
struct Columns {
  std::size_t id = 0, text = 1;
  std::optional<std::size_t> title;
  std::size_t count = 2;
};

// The columns a header row names, or nothing when the row is not a header: it must name an id
// column (id, _id, doc_id, docid; for queries also qid, query_id, query-id) and text (for queries
// also query), any case, and may name title; other names are kept as columns that are not read.
// A header naming two columns of one kind ("id,docid,text", "id,text,query") is refused: which
// one a reader took would be a guess, and a wrong guess indexes the wrong text without a word.
std::optional<Columns> header_columns(const TsvRow& row, const std::string& path) {
  std::vector<std::size_t> id, text, title;
  for (std::size_t i = 0; i < row.fields.size(); ++i) {
    const std::string name = ascii_lower(row.fields[i]);
    if (name == "id" || name == "_id" || name == "doc_id" || name == "docid" || name == "qid" ||
        name == "query_id" || name == "query-id") {
      id.push_back(i);
    } else if (name == "text" || name == "query") {
      text.push_back(i);
    } else if (name == "title") {
      title.push_back(i);
    }
  }
  if (id.empty() || text.empty()) return std::nullopt;
  for (const auto& [kind, columns] : {std::pair{"id", &id}, std::pair{"text", &text}, std::pair{"title", &title}}) {
    if (columns->size() < 2) continue;
    std::string names;
    for (std::size_t i : *columns) names += (names.empty() ? "" : ", ") + row.fields[i];
    detail::throw_line_error(path, row.line, "the header names " + std::to_string(columns->size()) + " " + kind +
                                                 " columns (" + names + "): keep one, or rename the others");
  }
  return Columns{id.front(), text.front(), title.empty() ? std::nullopt : std::optional<std::size_t>(title.front()),
                 row.fields.size()};
}

// Appends the document of one table row, ids unique.
void add_row(std::vector<Document>& corpus, std::set<std::string>& seen, const Columns& columns,
             const std::vector<std::string>& fields, const std::string& path, std::size_t line) {
  Document document;
  document.id = fields[columns.id];
  document.text = fields[columns.text];
  if (columns.title) document.title = fields[*columns.title];
  if (document.id.empty()) detail::throw_line_error(path, line, "empty id");
  if (!seen.insert(document.id).second) {
    detail::throw_line_error(path, line, "duplicate id \"" + document.id + "\"");
  }
  corpus.push_back(std::move(document));
}

std::string joined(std::vector<std::string>::const_iterator first, std::vector<std::string>::const_iterator last,
                   char separator) {
  std::string text;
  for (auto it = first; it != last; ++it) text += (it == first ? "" : std::string(1, separator)) + *it;
  return text;
}

// RFC 4180 records of `bytes`, each with the line it starts on; BOM dropped, lines ending as
// split_lines ends them (LF or CRLF, or a lone CR in a file without LF). A line break inside a
// quoted field is kept as LF.
std::vector<TsvRow> csv_records(const std::string& bytes, const std::string& path) {
  std::vector<TsvRow> rows;
  std::size_t pos = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::size_t line = 1;
  const std::size_t n = bytes.size();
  const detail::LineEnds ends = detail::line_ends_of(bytes);
  auto at_line_end = [&](std::size_t p) { return p >= n || detail::line_ending_length(bytes, p, ends) > 0; };
  while (pos < n) {
    TsvRow row;
    row.line = line;
    while (true) {
      std::string field;
      if (bytes[pos] == '"') {
        const std::size_t opened = line;
        ++pos;
        while (true) {
          if (pos >= n) detail::throw_line_error(path, opened, "a quoted field is never closed");
          if (bytes[pos] == '"') {
            if (pos + 1 < n && bytes[pos + 1] == '"') {
              field += '"';
              pos += 2;
              continue;
            }
            ++pos;
            break;
          }
          if (const std::size_t ending = detail::line_ending_length(bytes, pos, ends); ending > 0) {
            field += '\n';
            pos += ending;
            ++line;
            continue;
          }
          field += bytes[pos++];
        }
        if (pos < n && bytes[pos] != ',' && !at_line_end(pos)) {
          detail::throw_line_error(path, line, "text after the closing quote of a field");
        }
      } else {
        while (pos < n && bytes[pos] != ',' && !at_line_end(pos)) field += bytes[pos++];
      }
      row.fields.push_back(std::move(field));
      if (pos < n && bytes[pos] == ',') {
        ++pos;
        continue;
      }
      break;
    }
    pos += detail::line_ending_length(bytes, pos, ends);
    ++line;
    const bool empty_line = row.fields.size() == 1 && row.fields[0].empty();
    if (!empty_line) rows.push_back(std::move(row));
  }
  return rows;
}

bool has_extension(const std::string& path, const std::string& extension) {
  const std::string lower = ascii_lower(path);
  return lower.size() >= extension.size() && lower.compare(lower.size() - extension.size(), extension.size(), extension) == 0;
}

}  // namespace

std::vector<Document> load_tsv_documents(const std::string& path) {
  const std::vector<TsvRow> rows = read_tsv(path);
  std::vector<Document> corpus;
  std::set<std::string> seen;
  const std::optional<Columns> header = rows.empty() ? std::nullopt : header_columns(rows.front(), path);
  for (std::size_t r = header ? 1 : 0; r < rows.size(); ++r) {
    const TsvRow& row = rows[r];
    if (!header) {
      if (row.fields.size() < 2) detail::throw_line_error(path, row.line, "expected id<TAB>text, found no tab");
      add_row(corpus, seen, Columns{}, {row.fields[0], joined(row.fields.begin() + 1, row.fields.end(), '\t')}, path,
              row.line);
      continue;
    }
    const bool text_last = header->text + 1 == header->count;
    if (row.fields.size() < header->count || (row.fields.size() > header->count && !text_last)) {
      detail::throw_line_error(path, row.line, std::to_string(row.fields.size()) + " fields, the header names " +
                                                   std::to_string(header->count));
    }
    std::vector<std::string> fields(row.fields.begin(), row.fields.begin() + header->count);
    if (text_last) fields.back() = joined(row.fields.begin() + header->text, row.fields.end(), '\t');
    add_row(corpus, seen, *header, fields, path, row.line);
  }
  return corpus;
}

std::vector<Document> load_csv_documents(const std::string& path) {
  const std::string bytes = read_file(path);
  for (const detail::NumberedLine& line : detail::split_lines(bytes)) detail::require_text(line.text, path, line.number);
  const std::vector<TsvRow> rows = csv_records(bytes, path);
  std::vector<Document> corpus;
  if (rows.empty()) return corpus;
  const std::optional<Columns> header = header_columns(rows.front(), path);
  if (!header) {
    detail::throw_line_error(path, rows.front().line,
                             "expected a header row naming the columns id (or _id) and text, optionally title; found \"" +
                                 joined(rows.front().fields.begin(), rows.front().fields.end(), ',') + "\"");
  }
  std::set<std::string> seen;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].fields.size() != header->count) {
      detail::throw_line_error(path, rows[r].line,
                               std::to_string(rows[r].fields.size()) + " fields, the header names " +
                                   std::to_string(header->count) + " (quote a field holding commas: \"a, b\")");
    }
    add_row(corpus, seen, *header, rows[r].fields, path, rows[r].line);
  }
  return corpus;
}

std::vector<Document> load_text_documents(const std::string& path) {
  const std::string bytes = read_file(path);
  std::vector<Document> corpus;
  for (const detail::NumberedLine& line : detail::split_lines(bytes)) {
    if (detail::is_blank(line.text)) continue;
    detail::require_text(line.text, path, line.number);
    Document document;
    document.id = std::to_string(line.number);
    document.text = std::string(line.text);
    corpus.push_back(std::move(document));
  }
  return corpus;
}

std::vector<Document> load_documents(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    const std::string beir_corpus = join_path(path, "corpus.jsonl");
    if (!path_exists(beir_corpus)) {
      throw FileNotFound("corpus " + path + " is a folder without corpus.jsonl; a corpus is " + kCorpusFormats);
    }
    return load_documents(beir_corpus);
  }
  std::vector<Document> corpus;
  try {
    if (has_extension(path, ".csv")) {
      corpus = load_csv_documents(path);
    } else if (has_extension(path, ".tsv")) {
      corpus = load_tsv_documents(path);
    } else if (has_extension(path, ".txt")) {
      corpus = load_text_documents(path);
    } else {
      corpus = load_jsonl_documents(path);
    }
  } catch (const CorruptFile& e) {
    throw CorruptFile(std::string(e.what()) + " (a corpus is " + kCorpusFormats + ")");
  }
  if (corpus.empty()) throw InvalidArgument("corpus " + path + " holds no documents");
  return corpus;
}

std::vector<Query> load_query_file(const std::string& path, const std::string& role, const std::string& items) {
  std::vector<Query> queries;
  if (has_extension(path, ".jsonl")) {
    queries = load_queries(path);
  } else if (has_extension(path, ".csv") || has_extension(path, ".tsv")) {
    // Columns as for a corpus, so that the id column names the query and is not read as its text.
    const auto rows = has_extension(path, ".csv") ? load_csv_documents(path) : load_tsv_documents(path);
    for (const Document& d : rows) {
      if (!d.title.empty()) {
        throw CorruptFile(path + ": query '" + d.id + "' has a title; a queries file has the columns id and text");
      }
      queries.push_back(Query{d.id, d.text});
    }
  } else {
    const std::string bytes = read_file(path);
    for (const detail::NumberedLine& line : detail::split_lines(bytes)) {
      if (line.text.empty()) continue;
      detail::require_text(line.text, path, line.number);
      Query q;
      q.id = "q" + std::to_string(queries.size() + 1);
      q.text = std::string(line.text);
      queries.push_back(std::move(q));
    }
  }
  if (queries.empty()) throw InvalidArgument(role + " " + path + " holds no " + items);
  return queries;
}

}  // namespace counterpoint::data
