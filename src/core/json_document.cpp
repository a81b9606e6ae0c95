#include "counterpoint/core/json_document.h"

#include "counterpoint/core/errors.h"

namespace counterpoint {

namespace {

// 1-based line and column of byte `offset`.
std::pair<std::size_t, std::size_t> position_of(std::string_view text, std::size_t offset, std::size_t first_line) {
  std::size_t line = first_line, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

std::string at(const std::string& origin, std::size_t line, std::size_t column) {
  return origin + ":" + std::to_string(line) + ":" + std::to_string(column);
}

// Refuses nesting deeper than kMaxJsonDepth by counting brackets outside strings, before the
// parser builds anything: a deep value, once built, would already recurse when copied.
void require_shallow(std::string_view text, const std::string& origin, std::size_t first_line) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        const auto [line, column] = position_of(text, i, first_line);
        throw CorruptFile(at(origin, line, column) + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                          " levels of arrays and objects (the most counterpoint reads)");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

// nlohmann's message in the reader's terms: without its "[json.exception.parse_error.101] parse error
// at line 1, column 25: " header (the position is given as file:line:column already) and with
// "syntax error while parsing object - " turned into a trailing "(in an object)".
std::string reason(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0) {
    if (const auto close = what.find("] "); close != std::string::npos) what.erase(0, close + 2);
  }
  if (what.rfind("parse error", 0) == 0) {
    if (const auto colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
  }
  const std::string syntax = "syntax error while parsing ";
  if (what.rfind(syntax, 0) == 0) {
    if (const auto dash = what.find(" - "); dash != std::string::npos) {
      std::string parsing = what.substr(syntax.size(), dash - syntax.size());
      const bool vowel = !parsing.empty() && std::string("aeiou").find(parsing[0]) != std::string::npos;
      what = what.substr(dash + 3) + " (in " + (vowel ? "an " : "a ") + parsing + ")";
    }
  }
  return what;
}

// `where` names the whole text: "origin" for a document, "path:line" for one line of a file.
nlohmann::json parse(std::string_view text, const std::string& origin, std::size_t first_line,
                     const std::string& where) {
  require_no_nul(text, origin, first_line);
  require_shallow(text, origin, first_line);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, column] = position_of(text, e.byte > 0 ? e.byte - 1 : 0, first_line);
    throw CorruptFile(at(origin, line, column) + ": not valid JSON: " + reason(e));
  } catch (const nlohmann::json::exception& e) {  // out_of_range for 1e999
    throw CorruptFile(where + ": not valid JSON: " + reason(e));
  }
}

}  // namespace

void require_no_nul(std::string_view text, const std::string& origin, std::size_t first_line) {
  const std::size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return;
  const auto [line, column] = position_of(text, nul, first_line);
  throw CorruptFile(at(origin, line, column) + ": NUL byte (text files may not contain one)");
}

nlohmann::json parse_json_document(std::string_view text, const std::string& origin) {
  return parse(text, origin, 1, origin);
}

nlohmann::json parse_json_line(std::string_view line, const std::string& path, std::size_t line_number) {
  return parse(line, path, line_number, path + ":" + std::to_string(line_number));
}

nlohmann::json read_json_document(const std::string& path, std::uint64_t max_bytes) {
  return parse_json_document(read_file(path, max_bytes), path);
}

}  // namespace counterpoint
