// counterpoint/core/json_document.h: the one reader of JSON documents (model manifests, index
// headers, verifier descriptions, checkpoint state, vocabularies). nlohmann's parser ends its
// input at a NUL byte and would silently ignore whatever follows, so a NUL is refused first, by
// line and column; the file must also be regular and within a size limit (core/files.h).
// Nesting is limited too (kMaxJsonDepth), checked before any value is built.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "counterpoint/core/files.h"

namespace counterpoint {

// The deepest nesting of arrays and objects any JSON input may have. nlohmann's parser is
// iterative, but copying, comparing and dumping a value recurse once per level, so a
// 100,000-deep value fitting the size caps would exhaust the stack long after it was read, far
// from its file. No format of this library nests more than a few levels.
inline constexpr std::size_t kMaxJsonDepth = 128;

// Parses `text`; CorruptFile "origin:line:column: ..." for a NUL byte, malformed JSON or
// nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_document(std::string_view text, const std::string& origin);
// The same for line `line_number` of the JSON Lines file `path` (`line` without its ending):
// errors name "path:line:column" (or "path:line" where no column is known).
nlohmann::json parse_json_line(std::string_view line, const std::string& path, std::size_t line_number);
// read_file(path, max_bytes), then parse_json_document with the path as origin.
nlohmann::json read_json_document(const std::string& path, std::uint64_t max_bytes = kMaxDocumentBytes);
// CorruptFile "origin:line:column: NUL byte" for the first NUL in `text`, which is also the rule
// of the line-based data readers.
void require_no_nul(std::string_view text, const std::string& origin, std::size_t first_line = 1);

}  // namespace counterpoint
