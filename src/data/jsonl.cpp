#include "counterpoint/data/jsonl.h"

#include "counterpoint/core/files.h"
#include "counterpoint/core/json_document.h"
#include "line_reader.h"

namespace counterpoint::data {

void for_each_jsonl(const std::string& path,
                    const std::function<void(const nlohmann::json&, std::size_t)>& visit) {
  const std::string bytes = read_file(path);
  for (const detail::NumberedLine& line : detail::split_lines(bytes)) {
    if (detail::is_blank(line.text)) continue;
    detail::require_text(line.text, path, line.number);
    visit(parse_json_line(line.text, path, line.number), line.number);
  }
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> values;
  for_each_jsonl(path, [&](const nlohmann::json& value, std::size_t) { values.push_back(value); });
  return values;
}

void require_jsonl_object(const nlohmann::json& value, const std::string& path, std::size_t line) {
  if (!value.is_object()) {
    detail::throw_line_error(path, line,
                             std::string("expected a JSON object, got ") + value.type_name());
  }
}

std::string jsonl_id(const nlohmann::json& object, const char* key, const std::string& path,
                     std::size_t line) {
  auto it = object.find(key);
  if (it == object.end()) {
    detail::throw_line_error(path, line, std::string("missing field \"") + key + "\"");
  }
  if (it->is_string()) {
    std::string id = it->get<std::string>();
    if (id.empty()) detail::throw_line_error(path, line, std::string("empty \"") + key + "\"");
    return id;
  }
  if (it->is_number_integer()) return it->dump();
  detail::throw_line_error(path, line,
                           std::string("field \"") + key + "\" must be a string or an integer, got " +
                               it->type_name());
}

std::string jsonl_string(const nlohmann::json& object, const char* key, const std::string& path,
                         std::size_t line) {
  auto it = object.find(key);
  if (it == object.end()) {
    detail::throw_line_error(path, line, std::string("missing field \"") + key + "\"");
  }
  if (!it->is_string()) {
    detail::throw_line_error(
        path, line, std::string("field \"") + key + "\" must be a string, got " + it->type_name());
  }
  return it->get<std::string>();
}

std::string jsonl_optional_string(const nlohmann::json& object, const char* key,
                                  const std::string& path, std::size_t line) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  return jsonl_string(object, key, path, line);
}

}  // namespace counterpoint::data
