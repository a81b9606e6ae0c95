#include "counterpoint/data/tsv.h"

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "line_reader.h"

namespace counterpoint::data {

std::vector<TsvRow> read_tsv(const std::string& path) {
  if (!path_exists(path)) throw FileNotFound("file not found: " + path);
  const std::string bytes = read_file(path);
  std::vector<TsvRow> rows;
  for (const detail::NumberedLine& line : detail::split_lines(bytes)) {
    if (line.text.empty()) continue;
    detail::require_text(line.text, path, line.number);
    TsvRow row;
    row.line = line.number;
    std::size_t start = 0;
    while (true) {
      const std::size_t tab = line.text.find('\t', start);
      row.fields.emplace_back(line.text.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace counterpoint::data
