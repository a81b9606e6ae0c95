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

}  // namespace

void require_no_nul(std::string_view text, const std::string& origin, std::size_t first_line) {
  const std::size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return;
  const auto [line, column] = position_of(text, nul, first_line);
  throw CorruptFile(origin + ":" + std::to_string(line) + ":" + std::to_string(column) +
                    ": NUL byte (text files may not contain one)");
}

nlohmann::json parse_json_document(std::string_view text, const std::string& origin) {
  require_no_nul(text, origin);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, column] = position_of(text, e.byte > 0 ? e.byte - 1 : 0, 1);
    throw CorruptFile(origin + ":" + std::to_string(line) + ":" + std::to_string(column) + ": not valid JSON (" +
                      e.what() + ")");
  } catch (const nlohmann::json::exception& e) {  // out_of_range for 1e999
    throw CorruptFile(origin + ": not valid JSON (" + e.what() + ")");
  }
}

nlohmann::json read_json_document(const std::string& path, std::uint64_t max_bytes) {
  return parse_json_document(read_file(path, max_bytes), path);
}

}  // namespace counterpoint
