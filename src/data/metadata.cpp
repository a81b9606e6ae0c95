#include "counterpoint/data/metadata.h"

#include "counterpoint/data/jsonl.h"
#include "line_reader.h"

namespace counterpoint::data {

std::map<std::string, nlohmann::json> load_metadata(const std::string& path) {
  std::map<std::string, nlohmann::json> metadata;
  for_each_jsonl(path, [&](const nlohmann::json& value, std::size_t line) {
    require_jsonl_object(value, path, line);
    if (value.contains("id") && value.contains("_id")) {
      detail::throw_line_error(path, line, "both \"id\" and \"_id\" given; keep one");
    }
    const char* key = value.contains("id") ? "id" : "_id";
    std::string id = jsonl_id(value, key, path, line);
    nlohmann::json fields = value;
    fields.erase(key);
    if (!metadata.emplace(id, std::move(fields)).second) {
      detail::throw_line_error(path, line, "duplicate id \"" + id + "\"");
    }
  });
  return metadata;
}

}  // namespace counterpoint::data
