// Fuzzes the one JSON reader (parse_json_document, parse_json_line) on arbitrary text. Anything
// refused must be CorruptFile; a value that parses holds no NUL and nests no deeper than
// kMaxJsonDepth, and survives copy, dump and parse again (all of which recurse per level, so a
// deeper value would crash here). Its seed corpus holds documents nested far past the limit.
#include <cstdint>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/json_document.h"
#include "fuzz_support.h"

namespace {

std::size_t depth_of(const nlohmann::json& value) {
  std::size_t deepest = 0;
  if (value.is_structured()) {
    for (const auto& item : value) deepest = std::max(deepest, depth_of(item));
    return deepest + 1;
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const bool as_line : {false, true}) {
    nlohmann::json value;
    try {
      value = as_line ? counterpoint::parse_json_line(text, "fuzz.jsonl", 3)
                      : counterpoint::parse_json_document(text, "fuzz.json");
    } catch (const counterpoint::CorruptFile&) {
      continue;
    }
    FUZZ_CHECK(text.find('\0') == std::string::npos);
    FUZZ_CHECK(depth_of(value) <= counterpoint::kMaxJsonDepth);
    const nlohmann::json copy = value;
    FUZZ_CHECK(counterpoint::parse_json_document(copy.dump(), "round trip") == value);
  }
  return 0;
}
