// Bad and unusual text through the whole encoder (tokenizer + TorchScript network), using the
// tiny random BERT of tests/fixtures/bert_tiny (hidden 32, max_length 64, cls pooling): the
// encoder must return finite unit rows for anything valid and InvalidArgument for invalid
// UTF-8, never a crash or a silently dropped text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/manifest.h"

namespace counterpoint {
namespace {

const std::string kFixture = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";

const Encoder& tiny() {
  static const std::shared_ptr<Encoder> encoder = Encoder::load(kFixture, EncoderConfig{1});
  return *encoder;
}

void expect_unit_rows(const Matrix& m) {
  for (std::size_t r = 0; r < m.rows(); ++r) {
    double norm = 0;
    for (std::size_t c = 0; c < m.cols(); ++c) {
      ASSERT_TRUE(std::isfinite(m(r, c))) << "row " << r;
      norm += double(m(r, c)) * m(r, c);
    }
    EXPECT_NEAR(norm, 1.0, 1e-5) << "row " << r;
  }
}

void expect_same_row(const Matrix& m, std::size_t a, std::size_t b) {
  for (std::size_t c = 0; c < m.cols(); ++c) EXPECT_NEAR(m(a, c), m(b, c), 1e-6) << "rows " << a << ", " << b;
}

TEST(EncoderBadInput, EmptyListGivesZeroRowsOfTheModelWidth) {
  EncodeReport report;
  const Matrix m = tiny().encode({}, {}, &report);
  EXPECT_EQ(m.rows(), 0u);
  EXPECT_EQ(report.texts, 0u);
  EXPECT_TRUE(tiny().encode_tokens({}).empty());
}

TEST(EncoderBadInput, EmptyWhitespaceNulAndControlTextEncodeLikeTheirCleanedForm) {
  // Cleaning drops NUL and control characters and all whitespace separates words, so each
  // pair of texts below is the same token sequence.
  const std::vector<std::string> texts = {"", " \t\n ", "the cat", std::string("the\0 cat", 8),
                                          "the\x01 \x7f" "cat", "the\u00a0cat"};
  EncodeReport report;
  const Matrix m = tiny().encode(texts, {}, &report);
  ASSERT_EQ(m.rows(), 6u);
  expect_unit_rows(m);
  expect_same_row(m, 0, 1);
  for (std::size_t r : {3, 4, 5}) expect_same_row(m, 2, r);
  EXPECT_EQ(report.tokens, 2u + 2u + 4u * 4u);  // [CLS] [SEP] twice, [CLS] the cat [SEP] four times
}

TEST(EncoderBadInput, InvalidUtf8IsRejectedWithItsOffset) {
  try {
    tiny().encode({"the cat", "the\xFF"});
    FAIL() << "invalid UTF-8 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8 at byte offset 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tiny().encode_tokens({"\xC0\xAF"}), InvalidArgument);
}

TEST(EncoderBadInput, TenMegabyteTextIsTruncatedAndReported) {
  std::string huge;
  huge.reserve(10u << 20);
  while (huge.size() < (10u << 20)) huge += "the cat sat on the mat. ";
  EncodeReport report;
  const Matrix m = tiny().encode({huge, "the cat"}, {}, &report);
  ASSERT_EQ(m.rows(), 2u);
  expect_unit_rows(m);
  EXPECT_EQ(report.truncated, 1u);
  EXPECT_EQ(report.tokens, 64u + 4u);
}

TEST(EncoderBadInput, MixedScriptsAndEmojiGiveFiniteUnitRows) {
  const Matrix m = tiny().encode({"Кот 猫 قطة 😀 the cat", "🙂🙃", "e\u0301\u0301\u0301"});
  ASSERT_EQ(m.rows(), 3u);
  expect_unit_rows(m);
}

TEST(EncoderBadInput, TwentyThousandTinyStringsKeepTheirOrder) {
  std::vector<std::string> texts;
  for (int i = 0; i < 20000; ++i) texts.push_back(i % 2 ? "cat" : "dog");
  EncodeOptions options;
  options.batch_size = 4096;
  EncodeReport report;
  const Matrix m = tiny().encode(texts, options, &report);
  ASSERT_EQ(m.rows(), 20000u);
  EXPECT_EQ(report.tokens, 60000u);
  const Matrix pair = tiny().encode({"dog", "cat"});
  for (std::size_t r : {0, 1, 2, 19998, 19999}) {
    for (std::size_t c = 0; c < 32; ++c) ASSERT_NEAR(m(r, c), pair(r % 2, c), 1e-5) << "row " << r;
  }
}

TEST(EncoderBadInput, ZeroBatchSizeIsInvalidArgument) {
  EncodeOptions options;
  options.batch_size = 0;
  EXPECT_THROW(tiny().encode({"the cat"}, options), InvalidArgument);
}

std::string manifest_error(const std::string& field, double value) {
  auto j = nlohmann::json::parse(read_file(kFixture + "/manifest.json"));
  j[field] = value;
  try {
    ModelManifest::parse(j.dump(), "manifest.json");
  } catch (const CorruptFile& e) {
    return e.what();
  }
  return "no CorruptFile";
}

// nlohmann's get<int> would truncate 1.5 to 1 and treat 1e300 with undefined behaviour; integer
// fields must be JSON integers in range.
TEST(ManifestBadInput, NonIntegralNumbersAreTheWrongType) {
  EXPECT_EQ(manifest_error("format_version", 1.5), "manifest.json: field 'format_version' has the wrong type (number)");
  EXPECT_EQ(manifest_error("embedding_dim", 32.5), "manifest.json: field 'embedding_dim' has the wrong type (number)");
  EXPECT_EQ(manifest_error("max_length", 1e300), "manifest.json: field 'max_length' has the wrong type (number)");
}

// Found by the manifest fuzzer: a number too large for a double made the JSON parser throw
// out_of_range, which escaped as an unexpected exception type.
TEST(ManifestBadInput, NumberOverflowIsNotValidJson) {
  try {
    ModelManifest::parse("{\"format\": \"counterpoint-model\", \"format_version\": 1e999}", "manifest.json");
    FAIL() << "accepted";
  } catch (const CorruptFile& e) {
    EXPECT_EQ(std::string(e.what()).rfind("manifest.json: not valid JSON", 0), 0u) << e.what();
  }
}

// The fixture's network embeds 64 positions: a manifest asking for 65 (or 4096) loaded and failed
// on the first long text, deep in TorchScript.
TEST(ManifestBadInput, AMaxLengthBeyondTheNetworksPositionsIsRefusedAtLoad) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "counterpoint_max_length_test";
  fs::remove_all(dir);
  fs::copy(kFixture, dir);
  for (const long long max_length : {65LL, 4096LL}) {
    auto j = nlohmann::json::parse(read_file(kFixture + "/manifest.json"));
    j["max_length"] = max_length;
    write_file_atomic((dir / "manifest.json").string(), j.dump());
    try {
      Encoder::load(dir.string());
      FAIL() << "max_length " << max_length << " accepted";
    } catch (const CorruptFile& e) {
      EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("its manifest's max_length " + std::to_string(max_length) +
                                                              " exceeds the 64 positions its network embeds"));
    }
  }
  auto j = nlohmann::json::parse(read_file(kFixture + "/manifest.json"));
  j["max_length"] = 64;
  write_file_atomic((dir / "manifest.json").string(), j.dump());
  EXPECT_EQ(Encoder::load(dir.string())->manifest().max_length, 64u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace counterpoint
