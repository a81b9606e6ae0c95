// counterpoint/data/metadata.h: per-document metadata files (metadata.jsonl), one JSON object
// per line keyed by "_id" (or "id"), e.g. {"_id": "c2973", "topic_id": "1", "stance": "pro"}.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace counterpoint::data {

// id -> the line's object without its id field. Ids follow jsonl_id; a line without an id, with
// both "id" and "_id", or repeating an id throws CorruptFile "file:line: ...".
std::map<std::string, nlohmann::json> load_metadata(const std::string& path);

}  // namespace counterpoint::data
