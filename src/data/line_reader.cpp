#include "line_reader.h"

#include <utf8proc.h>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/json_document.h"

namespace counterpoint::data::detail {

LineEnds line_ends_of(std::string_view bytes) {
  return bytes.find('\n') == std::string_view::npos && bytes.find('\r') != std::string_view::npos ? LineEnds::kCr
                                                                                                : LineEnds::kLf;
}

std::size_t line_ending_length(std::string_view bytes, std::size_t pos, LineEnds ends) {
  if (pos >= bytes.size()) return 0;
  if (ends == LineEnds::kCr) return bytes[pos] == '\r' ? 1 : 0;
  if (bytes[pos] == '\r') return pos + 1 < bytes.size() && bytes[pos + 1] == '\n' ? 2 : 0;
  return bytes[pos] == '\n' ? 1 : 0;
}

std::vector<NumberedLine> split_lines(const std::string& bytes) {
  std::string_view rest(bytes);
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (rest.substr(0, kBom.size()) == kBom) rest.remove_prefix(kBom.size());

  const LineEnds ends = line_ends_of(rest);
  const char terminator = ends == LineEnds::kCr ? '\r' : '\n';
  std::vector<NumberedLine> lines;
  std::size_t number = 0;
  while (!rest.empty()) {
    ++number;
    const std::size_t end = rest.find(terminator);
    std::string_view line = rest.substr(0, end);
    if (ends == LineEnds::kLf && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, number});
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return lines;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

void throw_line_error(const std::string& path, std::size_t line, const std::string& message) {
  throw CorruptFile(path + ":" + std::to_string(line) + ": " + message);
}

void require_text(std::string_view text, const std::string& path, std::size_t line) {
  // A NUL would end a JSON line early in nlohmann's parser and hide what follows it.
  require_no_nul(text, path, line);
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  std::size_t offset = 0;
  while (offset < text.size()) {
    utf8proc_int32_t codepoint = 0;
    utf8proc_ssize_t length = utf8proc_iterate(
        bytes + offset, static_cast<utf8proc_ssize_t>(text.size() - offset), &codepoint);
    if (length <= 0) {
      throw_line_error(path, line,
                       "invalid UTF-8 at byte " + std::to_string(offset + 1) + " of the line");
    }
    offset += static_cast<std::size_t>(length);
  }
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  if (line.find('\t') != std::string_view::npos) {
    std::size_t start = 0;
    while (true) {
      std::size_t tab = line.find('\t', start);
      std::string_view field =
          line.substr(start, tab == std::string_view::npos ? tab : tab - start);
      std::size_t first = field.find_first_not_of(' ');
      field = first == std::string_view::npos
                  ? std::string_view()
                  : field.substr(first, field.find_last_not_of(' ') - first + 1);
      fields.push_back(field);
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    return fields;
  }
  std::size_t start = line.find_first_not_of(' ');
  while (start != std::string_view::npos) {
    std::size_t end = line.find(' ', start);
    fields.push_back(line.substr(start, end == std::string_view::npos ? end : end - start));
    start = line.find_first_not_of(' ', end);
  }
  return fields;
}

}  // namespace counterpoint::data::detail
