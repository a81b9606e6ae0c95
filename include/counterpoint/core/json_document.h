// counterpoint/core/json_document.h: the one reader of JSON documents (model manifests, index
// headers, verifier descriptions, checkpoint state, vocabularies). nlohmann's parser ends its
// input at a NUL byte and would silently ignore whatever follows, so a NUL is refused first, by
// line and column; the file must also be regular and within a size limit (core/files.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "counterpoint/core/files.h"

namespace counterpoint {

// Parses `text`; CorruptFile "origin:line:column: ..." for a NUL byte or malformed JSON.
nlohmann::json parse_json_document(std::string_view text, const std::string& origin);
// read_file(path, max_bytes), then parse_json_document with the path as origin.
nlohmann::json read_json_document(const std::string& path, std::uint64_t max_bytes = kMaxDocumentBytes);
// CorruptFile "origin:line:column: NUL byte" for the first NUL in `text`, which is also the rule
// of the line-based data readers.
void require_no_nul(std::string_view text, const std::string& origin, std::size_t first_line = 1);

}  // namespace counterpoint
