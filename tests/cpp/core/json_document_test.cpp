// The one JSON reader refuses nesting deeper than kMaxJsonDepth before building any value: a
// 100,000-deep document under the size caps parsed, then overflowed the stack when copied or
// dumped (index header checksum, query "meta" values).
#include "counterpoint/core/json_document.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "counterpoint/core/errors.h"

using namespace counterpoint;

namespace {

std::string nested(std::size_t depth, const std::string& inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

template <typename Fn>
std::string corrupt_message(Fn&& fn) {
  try {
    fn();
  } catch (const CorruptFile& e) {
    return e.what();
  }
  return "no CorruptFile";
}

}  // namespace

TEST(JsonDocument, NestingDeeperThanTheLimitIsCorruptNamingWhereAndTheLimit) {
  EXPECT_EQ(corrupt_message([] { parse_json_document(nested(100000), "header.json"); }),
            "header.json:1:129: JSON nested deeper than 128 levels of arrays and objects (the most counterpoint reads)");
  const std::string objects = "{\"meta\": " + std::string(200000, '{');
  EXPECT_EQ(corrupt_message([&] { parse_json_line(objects, "queries.jsonl", 7); }).rfind("queries.jsonl:7:137: JSON nested deeper than 128 levels", 0),
            0u);
}

TEST(JsonDocument, NestingUpToTheLimitParses) {
  const nlohmann::json value = parse_json_document(nested(kMaxJsonDepth, "1"), "deep.json");
  const nlohmann::json* inner = &value;
  for (std::size_t level = 1; level < kMaxJsonDepth; ++level) inner = &inner->at(0);
  EXPECT_EQ(*inner, nlohmann::json::array({1}));
}

TEST(JsonDocument, BracketsInsideStringsDoNotCountAsNesting) {
  const std::string brackets = std::string(1000, '[') + "\\\"" + std::string(1000, '{');
  EXPECT_EQ(parse_json_document("[\"" + brackets + "\"]", "strings.json")[0].get<std::string>().size(), 2001u);
}

TEST(JsonDocument, AFileNamesTheLineOfTheDeepValue) {
  const std::string path = ::testing::TempDir() + "cp_deep_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << "{\n  \"a\": 1,\n  \"b\": " << nested(500) << "\n}\n";  // the { is level 1
  EXPECT_EQ(corrupt_message([&] { read_json_document(path); }).rfind(path + ":3:135: JSON nested deeper", 0), 0u);
  std::remove(path.c_str());
}
