// counterpoint/data: readers and writers of the file formats users bring (BEIR datasets,
// plain corpora, metadata, TREC runs). jsonl.h owns JSON Lines parsing: one JSON value per
// line (ending at LF, CRLF or a lone CR), a leading BOM tolerated, blank lines skipped, every
// line checked for valid UTF-8, and every error reported as CorruptFile "file:line: ...".
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace counterpoint::data {

// Calls `visit(value, line_number)` for each non-blank line, in file order. A missing file
// throws FileNotFound; an empty file visits nothing. Exceptions thrown by `visit` propagate.
void for_each_jsonl(const std::string& path,
                    const std::function<void(const nlohmann::json& value, std::size_t line)>& visit);

// Every non-blank line's value, in file order.
std::vector<nlohmann::json> read_jsonl(const std::string& path);

// Field helpers for the loaders built on for_each_jsonl; each throws CorruptFile
// "path:line: ..." naming the field when the value does not fit.
//
// An id field: a JSON string, or a JSON integer taken as its decimal form ({"_id": 12} is id
// "12"), since BEIR's Python loader keeps whatever json.loads returns and ids are compared with
// the text columns of qrels files. Floats, booleans, null, arrays and objects are rejected.
std::string jsonl_id(const nlohmann::json& object, const char* key, const std::string& path,
                     std::size_t line);
// A required string field.
std::string jsonl_string(const nlohmann::json& object, const char* key, const std::string& path,
                         std::size_t line);
// An optional string field: missing or null gives "".
std::string jsonl_optional_string(const nlohmann::json& object, const char* key,
                                  const std::string& path, std::size_t line);
// Throws unless `value` is a JSON object.
void require_jsonl_object(const nlohmann::json& value, const std::string& path, std::size_t line);

}  // namespace counterpoint::data
