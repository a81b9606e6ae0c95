// counterpoint/data (private): the line discipline shared by every text format the data layer
// reads. Files are split into numbered lines with a leading UTF-8 BOM and CRLF endings removed,
// and every error names "file:line" so a user can open the offending line directly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace counterpoint::data::detail {

struct NumberedLine {
  std::string_view text;  // without the line ending
  std::size_t number;     // 1-based
};

// Splits `bytes` into lines ('\n' or "\r\n"); a BOM at the start of the file is dropped.
// The views point into `bytes`, which must outlive the result.
std::vector<NumberedLine> split_lines(const std::string& bytes);

// True when the line holds nothing but spaces and tabs.
bool is_blank(std::string_view line);

// Throws CorruptFile "path:line: message".
[[noreturn]] void throw_line_error(const std::string& path, std::size_t line,
                                   const std::string& message);

// Throws CorruptFile naming path, line and byte offset when `text` is not valid UTF-8, and
// "path:line:column: NUL byte" when it holds a NUL.
void require_text(std::string_view text, const std::string& path, std::size_t line);

// Splits on tabs when the line has one (fields trimmed of spaces), otherwise on runs of
// spaces (TREC files use spaces).
std::vector<std::string_view> split_fields(std::string_view line);

}  // namespace counterpoint::data::detail
