// Tab-separated files: exact fields (no trimming, empty fields kept), BOM and CRLF dropped,
// empty lines skipped with line numbers kept, and bad bytes refused by file and line.
#include "counterpoint/data/tsv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_files.h"

namespace counterpoint::data {
namespace {

using test_support::scratch_file;

TEST(ReadTsv, SplitsOnEveryTabAndKeepsFieldsExactly) {
  const auto path = scratch_file("rows.tsv", "\xEF\xBB\xBF" "a\t b \tc\r\n\nx\t\t\n  \n");
  const auto rows = read_tsv(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].fields, (std::vector<std::string>{"a", " b ", "c"}));
  EXPECT_EQ(rows[0].line, 1u);
  EXPECT_EQ(rows[1].fields, (std::vector<std::string>{"x", "", ""}));
  EXPECT_EQ(rows[1].line, 3u);
  EXPECT_EQ(rows[2].fields, (std::vector<std::string>{"  "}));  // not empty, so the caller decides
}

TEST(ReadTsv, RefusesInvalidUtf8AndNulBytesNamingTheLine) {
  EXPECT_THAT([&] { read_tsv(scratch_file("latin1.tsv", "ok\tfine\ncaf\xE9\tbad\n")); },
              ::testing::ThrowsMessage<CorruptFile>(::testing::HasSubstr("latin1.tsv:2")));
  EXPECT_THAT([&] { read_tsv(scratch_file("nul.tsv", std::string("a\tb\0c\n", 6))); },
              ::testing::ThrowsMessage<CorruptFile>(::testing::HasSubstr("nul.tsv:1")));
}

TEST(ReadTsv, AMissingFileIsFileNotFound) {
  EXPECT_THROW(read_tsv(::testing::TempDir() + "no-such-file.tsv"), FileNotFound);
}

}  // namespace
}  // namespace counterpoint::data
