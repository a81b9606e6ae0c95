// The default model against the original: the C++ tokenizer and TorchScript network together
// must reproduce the TF.js Universal Sentence Encoder Lite embeddings recorded in
// tests/fixtures/use_lite_golden.json (made by models/use_lite/make_golden.mjs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/torch_model.h"

using namespace counterpoint;

namespace {

std::string use_lite_dir() {
  const char* env = std::getenv("COUNTERPOINT_USE_LITE_DIR");
  return env ? env : std::string(COUNTERPOINT_SOURCE_DIR) + "/models/installed/use-lite-en";
}

// The test suite run by setup.sh installs the model first and sets COUNTERPOINT_REQUIRE_MODELS,
// so there a missing model is a failure rather than a skip.
bool model_required() {
  const char* env = std::getenv("COUNTERPOINT_REQUIRE_MODELS");
  return env && std::string(env) == "1";
}

class UseLiteParity : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!path_exists(use_lite_dir() + "/manifest.json")) {
      if (model_required()) FAIL() << "default model missing at " << use_lite_dir();
      GTEST_SKIP() << "default model not installed at " << use_lite_dir() << " (run ./setup.sh build)";
    }
    golden_ = nlohmann::json::parse(read_file(std::string(COUNTERPOINT_TEST_DATA_DIR) + "/use_lite_golden.json"));
    encoder_ = Encoder::load(use_lite_dir(), EncoderConfig{2});
  }
  nlohmann::json golden_;
  std::shared_ptr<Encoder> encoder_;
};

}  // namespace

TEST_F(UseLiteParity, ManifestDescribesTheConvertedModel) {
  const auto& m = encoder_->manifest();
  EXPECT_EQ(m.name, "use-lite-en");
  EXPECT_EQ(m.embedding_dim, 512u);
  EXPECT_EQ(m.max_length, 128u);
  EXPECT_EQ(m.license, "Apache-2.0");
  EXPECT_EQ(m.tokenizer_kind, "use-unigram");
}

TEST_F(UseLiteParity, TokenIdsEqualTheOriginalTokenizer) {
  for (const auto& s : golden_["sentences"]) {
    const auto e = encoder_->model().tokenizer().encode(s["text"].get<std::string>(), 0);
    EXPECT_EQ(e.ids, s["ids"].get<std::vector<int64_t>>()) << s["text"];
  }
}

TEST_F(UseLiteParity, EmbeddingsMatchTheOriginalInOnePaddedBatch) {
  std::vector<std::string> texts;
  for (const auto& s : golden_["sentences"]) texts.push_back(s["text"]);
  EncodeOptions options;
  options.batch_size = texts.size();  // every sentence padded to the longest
  const Matrix out = encoder_->encode(texts, options);
  double worst = 1.0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto expected = golden_["sentences"][i]["embedding"].get<std::vector<float>>();
    ASSERT_EQ(expected.size(), out.cols());
    double dot = 0, ne = 0, no = 0;
    for (std::size_t j = 0; j < expected.size(); ++j) {
      dot += double(expected[j]) * out(i, j);
      ne += double(expected[j]) * expected[j];
      no += double(out(i, j)) * out(i, j);
    }
    const double cosine = dot / std::sqrt(ne * no);
    worst = std::min(worst, cosine);
    EXPECT_GE(cosine, 0.999) << texts[i];
  }
  RecordProperty("min_cosine", std::to_string(worst));
}

TEST_F(UseLiteParity, LengthBucketingDoesNotChangeEmbeddings) {
  std::vector<std::string> texts;
  for (const auto& s : golden_["sentences"]) texts.push_back(s["text"]);
  EncodeOptions one_by_one;
  one_by_one.batch_size = 1;
  EncodeOptions bucketed;
  bucketed.batch_size = 8;
  const Matrix a = encoder_->encode(texts, one_by_one);
  const Matrix b = encoder_->encode(texts, bucketed);
  for (std::size_t i = 0; i < a.rows(); ++i) {
    for (std::size_t j = 0; j < a.cols(); ++j) ASSERT_NEAR(a(i, j), b(i, j), 1e-5) << texts[i];
  }
}

TEST_F(UseLiteParity, LongInputsAreTruncatedAndReported) {
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "word ";
  EncodeReport report;
  const Matrix out = encoder_->encode({long_text, "short"}, {}, &report);
  EXPECT_EQ(out.rows(), 2u);
  EXPECT_EQ(report.truncated, 1u);
}

TEST_F(UseLiteParity, EmptyListGivesEmptyMatrixAndInvalidUtf8IsRejected) {
  EXPECT_EQ(encoder_->encode({}).rows(), 0u);
  EXPECT_THROW(encoder_->encode({std::string("bad \xff byte")}), InvalidArgument);
}

TEST_F(UseLiteParity, TokenEmbeddingsHaveOneRowPerToken) {
  const auto tokens = encoder_->encode_tokens({"The cat sat on the mat.", "Hi"});
  ASSERT_EQ(tokens.size(), 2u);
  const auto ids = encoder_->model().tokenizer().encode("The cat sat on the mat.", 128).ids;
  EXPECT_EQ(tokens[0].rows(), ids.size());
  EXPECT_EQ(tokens[0].cols(), encoder_->token_dim());
}
