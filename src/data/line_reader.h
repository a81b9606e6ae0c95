// counterpoint/data (private): the line discipline shared by every text format the data layer
// reads. Files are split into numbered lines with a leading UTF-8 BOM and the line endings removed,
// and every error names "file:line" so a user can open the offending line directly.
//
// A file's lines end at LF (a CR before it dropped: Windows' CRLF) when it holds any LF, and at a
// lone CR only when it holds none (classic Mac OS, and what some spreadsheet exports still write).
// Before, a CR-only TSV or text file was read as one line ("indexed 1") without a word. The rule is
// per file, not per character as Python's universal newlines: a stray CR inside a line of an LF
// file stays in its text as it always did, rather than silently cutting a query or passage in two.
// JSON Lines are unaffected in practice: a CR inside a JSON string must be escaped ("\r").
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

// How the lines of a file end (see above).
enum class LineEnds { kLf, kCr };
LineEnds line_ends_of(std::string_view bytes);

// The length of the line ending at `pos` in `bytes`, whose lines end as `ends` says: 2 for CRLF, 1
// for an LF or (kCr) a CR, 0 when no line ends there.
std::size_t line_ending_length(std::string_view bytes, std::size_t pos, LineEnds ends);

// Splits `bytes` into lines (ending as line_ends_of says); a BOM at the start of the file is
// dropped.
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
