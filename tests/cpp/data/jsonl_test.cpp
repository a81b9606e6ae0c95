#include "counterpoint/data/jsonl.h"

#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"
#include "test_files.h"

using namespace counterpoint;
using namespace counterpoint::data;
using counterpoint::test_support::scratch_file;
using counterpoint::test_support::corrupt_message;

TEST(Jsonl, SkipsBomBlankLinesAndCarriageReturnsAndReportsLineNumbers) {
  std::string path =
      scratch_file("a.jsonl", "\xEF\xBB\xBF{\"a\": 1}\r\n\r\n   \n{\"a\": 2}\r\n{\"a\": 3}");
  std::vector<std::pair<int, std::size_t>> seen;
  for_each_jsonl(path, [&](const nlohmann::json& value, std::size_t line) {
    seen.emplace_back(value["a"].get<int>(), line);
  });
  EXPECT_EQ(seen, (std::vector<std::pair<int, std::size_t>>{{1, 1}, {2, 4}, {3, 5}}));
}

TEST(Jsonl, MalformedLineIsCorruptFileNamingFileAndLine) {
  std::string path = scratch_file("bad.jsonl", "{\"a\": 1}\n\n{\"a\": \n");
  std::string message = corrupt_message([&] { read_jsonl(path); });
  EXPECT_EQ(message.rfind(path + ":3:7: not valid JSON", 0), 0u) << message;
}

TEST(Jsonl, AParseErrorSaysWhatWasFoundInTheReadersTermsWithoutTheParsersHeader) {
  std::string path = scratch_file("comma.jsonl", "{\"_id\": \"a\", \"text\": \"x\", }\n");
  EXPECT_EQ(corrupt_message([&] { read_jsonl(path); }),
            path + ":1:27: not valid JSON: unexpected '}'; expected string literal (in an object key)");
  path = scratch_file("cut.jsonl", "{\"_id\": \"a\"\n");
  EXPECT_EQ(corrupt_message([&] { read_jsonl(path); }),
            path + ":1:12: not valid JSON: unexpected end of input; expected '}' (in an object)");
}

TEST(Jsonl, InvalidUtf8IsCorruptFileNamingLineAndByte) {
  std::string path = scratch_file("latin1.jsonl", "{\"t\": \"ok\"}\n{\"t\": \"caf\xE9\"}\n");
  EXPECT_EQ(corrupt_message([&] { read_jsonl(path); }),
            path + ":2: invalid UTF-8 at byte 11 of the line");
}

TEST(Jsonl, OverlongUtf8EncodingIsRejected) {
  std::string path = scratch_file("overlong.jsonl", "{\"t\": \"\xC0\xAF\"}\n");
  EXPECT_EQ(corrupt_message([&] { read_jsonl(path); }),
            path + ":1: invalid UTF-8 at byte 8 of the line");
}

TEST(Jsonl, EmptyFileGivesNoValuesAndMissingFileIsFileNotFound) {
  EXPECT_TRUE(read_jsonl(scratch_file("empty.jsonl", "")).empty());
  EXPECT_THROW(read_jsonl(::testing::TempDir() + "cp_no_such_file.jsonl"), FileNotFound);
}

TEST(Jsonl, IdsAreStringsOrIntegersInDecimalForm) {
  const std::string path = "f.jsonl";
  EXPECT_EQ(jsonl_id(nlohmann::json{{"_id", "d7"}}, "_id", path, 1), "d7");
  EXPECT_EQ(jsonl_id(nlohmann::json{{"_id", 12}}, "_id", path, 1), "12");
  EXPECT_EQ(jsonl_id(nlohmann::json{{"_id", -3}}, "_id", path, 1), "-3");
  EXPECT_EQ(corrupt_message([&] { jsonl_id(nlohmann::json{{"_id", 1.5}}, "_id", path, 4); }),
            "f.jsonl:4: field \"_id\" must be a string or an integer, got number");
  EXPECT_EQ(corrupt_message([&] { jsonl_id(nlohmann::json{{"_id", true}}, "_id", path, 4); }),
            "f.jsonl:4: field \"_id\" must be a string or an integer, got boolean");
  EXPECT_EQ(corrupt_message([&] { jsonl_id(nlohmann::json{{"_id", ""}}, "_id", path, 2); }),
            "f.jsonl:2: empty \"_id\"");
  EXPECT_EQ(corrupt_message([&] { jsonl_id(nlohmann::json::object(), "_id", path, 2); }),
            "f.jsonl:2: missing field \"_id\"");
}

TEST(Jsonl, StringFieldsAreTypeChecked) {
  nlohmann::json object{{"text", 5}, {"title", nullptr}};
  EXPECT_EQ(jsonl_optional_string(object, "title", "f.jsonl", 1), "");
  EXPECT_EQ(jsonl_optional_string(object, "absent", "f.jsonl", 1), "");
  EXPECT_EQ(corrupt_message([&] { jsonl_string(object, "text", "f.jsonl", 9); }),
            "f.jsonl:9: field \"text\" must be a string, got number");
  EXPECT_EQ(corrupt_message([&] { require_jsonl_object(nlohmann::json::array(), "f.jsonl", 3); }),
            "f.jsonl:3: expected a JSON object, got array");
}
