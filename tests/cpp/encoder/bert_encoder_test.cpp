// The BERT model directory produced by models/bert/convert_hf.py, loaded by the C++ encoder.
// tests/fixtures/bert_tiny holds a converted random 2-layer BERT (hidden 32, 101-piece vocabulary)
// and expected.json: hand-derived token ids and the cls-pooled, L2-normalised embeddings that an
// independent numpy implementation computes for four sentences. Also the optional linear head on
// the pooled embedding, and model directories whose head is wrong.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/feature_cache.h"
#include "counterpoint/encoder/manifest.h"
#include "counterpoint/encoder/torch_model.h"

namespace counterpoint {
namespace {

namespace fs = std::filesystem;

const std::string kFixture = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";

struct ExpectedSentence {
  std::string text;
  std::vector<int64_t> ids;
  std::vector<float> embedding;
};

std::vector<ExpectedSentence> expected_sentences() {
  const auto j = nlohmann::json::parse(read_file(join_path(kFixture, "expected.json")));
  std::vector<ExpectedSentence> out;
  for (const auto& s : j.at("sentences")) {
    out.push_back({s.at("text").get<std::string>(), s.at("ids").get<std::vector<int64_t>>(),
                   s.at("embedding").get<std::vector<float>>()});
  }
  return out;
}

std::vector<std::string> texts_of(const std::vector<ExpectedSentence>& sentences) {
  std::vector<std::string> texts;
  for (const auto& s : sentences) texts.push_back(s.text);
  return texts;
}

// A writable copy of the fixture, unique to the running test.
std::string fixture_copy() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::path(::testing::TempDir()) /
                       (std::string("cp_bert_") + info->test_suite_name() + "_" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* name : {"manifest.json", "model.pt", "vocab.txt"}) {
    fs::copy_file(fs::path(kFixture) / name, dir / name);
  }
  return dir.string();
}

TEST(BertEncoder, FixtureManifestDescribesACls32WideWordPieceModel) {
  const ModelManifest m = ModelManifest::load(kFixture);
  EXPECT_EQ(m.architecture, "bert");
  EXPECT_EQ(m.embedding_dim, 32u);
  EXPECT_EQ(m.token_dim, 32u);
  EXPECT_EQ(m.pooling, Pooling::kCls);
  EXPECT_EQ(m.max_length, 64u);
  EXPECT_EQ(m.tokenizer_kind, "wordpiece");
  EXPECT_TRUE(m.lowercase);
}

TEST(BertEncoder, TokenizerProducesTheHandDerivedIds) {
  const auto encoder = Encoder::load(kFixture, EncoderConfig{1});
  for (const auto& s : expected_sentences()) {
    EXPECT_EQ(encoder->model().tokenizer().encode(s.text, 64).ids, s.ids) << s.text;
  }
}

TEST(BertEncoder, EmbeddingsMatchTheNumpyReference) {
  const auto sentences = expected_sentences();
  ASSERT_EQ(sentences.size(), 4u);
  const auto encoder = Encoder::load(kFixture, EncoderConfig{1});
  EncodeReport report;
  const Matrix embeddings = encoder->encode(texts_of(sentences), {}, &report);
  ASSERT_EQ(embeddings.rows(), 4u);
  ASSERT_EQ(embeddings.cols(), 32u);
  std::size_t tokens = 0;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    tokens += sentences[i].ids.size();
    for (std::size_t c = 0; c < 32; ++c) {
      EXPECT_NEAR(embeddings.row(i)[c], sentences[i].embedding[c], 1e-4) << sentences[i].text << " dim " << c;
    }
  }
  EXPECT_EQ(report.texts, 4u);
  EXPECT_EQ(report.tokens, tokens);
  EXPECT_EQ(report.truncated, 0u);
}

TEST(BertEncoder, PaddingInALargerBatchLeavesEmbeddingsUnchanged) {
  const auto texts = texts_of(expected_sentences());
  const auto encoder = Encoder::load(kFixture, EncoderConfig{1});
  EncodeOptions one_by_one;
  one_by_one.batch_size = 1;
  const Matrix alone = encoder->encode(texts, one_by_one);
  const Matrix together = encoder->encode(texts);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    for (std::size_t c = 0; c < 32; ++c) EXPECT_NEAR(alone.row(i)[c], together.row(i)[c], 1e-5);
  }
}

// A batch over max_batch_tokens runs as several passes, each cut to its own longest text: every
// row still lands at its text's position with the reference embedding, the report counts what
// one pass counts, and token states keep every token of every text.
TEST(BertEncoder, ABatchOverTheTokenCapRunsInPassesWithTheSameRows) {
  const auto sentences = expected_sentences();
  auto texts = texts_of(sentences);
  texts.push_back(texts[0] + " " + texts[1] + " " + texts[2]);  // the longest, so passes differ in width
  const auto encoder = Encoder::load(kFixture, EncoderConfig{1});
  EncodeOptions one_pass;
  one_pass.max_batch_tokens = 0;
  EncodeReport whole_report;
  const Matrix whole = encoder->encode(texts, one_pass, &whole_report);
  const auto whole_tokens = encoder->encode_tokens(texts, one_pass);
  for (const std::size_t cap : {std::size_t(1), std::size_t(12), std::size_t(40)}) {
    EncodeOptions capped;
    capped.max_batch_tokens = cap;
    EncodeReport report;
    const Matrix rows = encoder->encode(texts, capped, &report);
    EXPECT_EQ(report.tokens, whole_report.tokens) << "cap " << cap;
    EXPECT_EQ(report.truncated, whole_report.truncated) << "cap " << cap;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      for (std::size_t c = 0; c < 32; ++c) {
        ASSERT_NEAR(rows.row(i)[c], whole.row(i)[c], 1e-5) << "cap " << cap << " text " << i;
        if (i < sentences.size()) {
          ASSERT_NEAR(rows.row(i)[c], sentences[i].embedding[c], 1e-4);
        }
      }
    }
    const auto tokens = encoder->encode_tokens(texts, capped);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      ASSERT_EQ(tokens[i].rows(), whole_tokens[i].rows()) << "cap " << cap << " text " << i;
      for (std::size_t r = 0; r < tokens[i].rows(); ++r) {
        for (std::size_t c = 0; c < 32; ++c) ASSERT_NEAR(tokens[i].row(r)[c], whole_tokens[i].row(r)[c], 1e-5);
      }
    }
  }
}

TEST(BertEncoder, FirstTokenStateIsTheClsEmbedding) {
  const auto sentences = expected_sentences();
  const auto encoder = Encoder::load(kFixture, EncoderConfig{1});
  const auto tokens = encoder->encode_tokens(texts_of(sentences));
  ASSERT_EQ(tokens.size(), 4u);
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    ASSERT_EQ(tokens[i].rows(), sentences[i].ids.size());
    for (std::size_t c = 0; c < 32; ++c) EXPECT_NEAR(tokens[i].row(0)[c], sentences[i].embedding[c], 1e-4);
  }
}

// Rewrites manifest.json of `dir` with `edit` applied and checksums recomputed, so that only
// the edited property is wrong.
template <typename Edit>
void rewrite_manifest(const std::string& dir, Edit edit) {
  ModelManifest manifest = ModelManifest::parse(read_file(join_path(dir, "manifest.json")), dir);
  edit(manifest);
  manifest.save(dir);
}

template <typename Exception>
void expect_load_error(const std::string& dir, const std::string& fragment) {
  try {
    Encoder::load(dir, EncoderConfig{1});
    ADD_FAILURE() << "loading " << dir << " did not throw";
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(BertEncoder, WrongChecksumInManifestIsCorruptFile) {
  const std::string dir = fixture_copy();
  auto manifest = nlohmann::json::parse(read_file(join_path(dir, "manifest.json")));
  manifest["files"]["model.pt"] = std::string(64, '0');
  write_file_atomic(join_path(dir, "manifest.json"), manifest.dump(2));
  expect_load_error<CorruptFile>(dir, "checksum mismatch for " + join_path(dir, "model.pt"));
}

TEST(BertEncoder, ModelFileThatIsNotTorchScriptIsCorruptFile) {
  const std::string dir = fixture_copy();
  write_file_atomic(join_path(dir, "model.pt"), "this is not a TorchScript archive\n");
  rewrite_manifest(dir, [](ModelManifest&) {});
  expect_load_error<CorruptFile>(dir, "cannot load TorchScript model " + join_path(dir, "model.pt"));
}

TEST(BertEncoder, EmbeddingDimDisagreeingWithTheModelIsCorruptFile) {
  const std::string dir = fixture_copy();
  rewrite_manifest(dir, [](ModelManifest& m) { m.embedding_dim = 16; });
  expect_load_error<CorruptFile>(dir, "returns pooled width 32 but its manifest says embedding_dim 16");
}

// Writes `head` as head.pt of `dir` and names it in the manifest (checksum included).
// Points the manifest at head.pt, of `kind`, with no checksum recorded yet.
void declare_head(const std::string& dir, HeadKind kind) {
  rewrite_manifest(dir, [kind](ModelManifest& m) {
    m.head_file = "head.pt";
    m.head_kind = kind;
    m.files["head.pt"] = "";
  });
}

void install_head(const std::string& dir, const torch::Tensor& head) {
  torch::save(head, join_path(dir, "head.pt"));
  declare_head(dir, HeadKind::kLinear);
}

TEST(BertEncoder, ALinearHeadMapsThePooledEmbeddingBeforeNormalisation) {
  const std::string dir = fixture_copy();
  torch::manual_seed(7);
  const torch::Tensor head = torch::randn({32, 32});
  install_head(dir, head);
  auto encoder = Encoder::load(dir, EncoderConfig{1});
  const auto sentences = expected_sentences();
  const Matrix got = encoder->encode(texts_of(sentences));
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    // Normalisation makes the scale of the pooled vector irrelevant, so the normalised reference
    // embedding stands in for the raw one.
    const auto reference = torch::tensor(sentences[i].embedding);
    const auto expected = torch::nn::functional::normalize(
        head.matmul(reference).unsqueeze(0), torch::nn::functional::NormalizeFuncOptions().dim(1));
    for (std::size_t j = 0; j < got.cols(); ++j) {
      EXPECT_NEAR(got.row(i)[j], expected[0][int64_t(j)].item<float>(), 1e-5) << sentences[i].text << " dim " << j;
    }
  }
  // The index identity names the head as well as the network.
  EXPECT_NE(encoder->identity().find("@" + sha256_file(join_path(dir, "model.pt")).substr(0, 12) + "+" +
                                     sha256_file(join_path(dir, "head.pt")).substr(0, 12)),
            std::string::npos)
      << encoder->identity();
}

TEST(BertEncoder, AHeadOfTheWrongShapeOrNotATensorIsCorruptFile) {
  const std::string dir = fixture_copy();
  install_head(dir, torch::zeros({16, 32}));
  expect_load_error<CorruptFile>(dir, "a linear head of model bert-tiny-random must be a float32 matrix W [embedding_dim "
                                      "x pooled width] (here 32 x 32), not W of shape 16 x 32");
  install_head(dir, torch::zeros({32, 32}, torch::kFloat64));
  expect_load_error<CorruptFile>(dir, "(here 32 x 32), not W of type Double");
  write_file_atomic(join_path(dir, "head.pt"), "not a tensor archive");
  rewrite_manifest(dir, [](ModelManifest&) {});
  expect_load_error<CorruptFile>(dir, "cannot load the head " + join_path(dir, "head.pt"));
}

// An MLP head is the list W, W1, b1, W2, b2 (manifest head_kind "mlp"); its hidden width is W1's
// rows, and every other tensor must agree with it.
void install_mlp_head(const std::string& dir, const std::vector<torch::Tensor>& head,
                      HeadKind kind = HeadKind::kMlp) {
  torch::save(head, join_path(dir, "head.pt"));
  declare_head(dir, kind);
}

TEST(BertEncoder, AnMlpHeadAddsItsGeluBranchToTheLinearMapAndRefusesTensorsThatDisagree) {
  const std::string plain_dir = kFixture, dir = fixture_copy();
  torch::manual_seed(11);
  const std::vector<torch::Tensor> head = {torch::randn({32, 32}), torch::randn({8, 32}), torch::randn({8}),
                                           torch::randn({32, 8}), torch::randn({32})};
  install_mlp_head(dir, head);
  auto plain = Encoder::load(plain_dir, EncoderConfig{1});
  auto encoder = Encoder::load(dir, EncoderConfig{1});
  EXPECT_EQ(encoder->manifest().head_kind, HeadKind::kMlp);
  const auto texts = texts_of(expected_sentences());
  const Matrix pooled = plain->pooled_features(texts), got = encoder->encode(texts);
  const auto f = torch::from_blob(const_cast<float*>(pooled.row(0)), {int64_t(pooled.rows()), 32});
  const auto expected = torch::nn::functional::normalize(
      f.matmul(head[0].t()) + torch::gelu(f.matmul(head[1].t()) + head[2]).matmul(head[3].t()) + head[4],
      torch::nn::functional::NormalizeFuncOptions().dim(1));
  for (std::size_t i = 0; i < got.rows(); ++i)
    for (std::size_t j = 0; j < got.cols(); ++j) EXPECT_NEAR(got.row(i)[j], expected[long(i)][long(j)].item<float>(), 1e-5);

  install_mlp_head(dir, {head[0], head[1], head[2], head[3]});
  expect_load_error<CorruptFile>(dir, "W2 [embedding_dim x hidden], b2 [embedding_dim] (here 32 x 32), not 4 tensors");
  install_mlp_head(dir, {head[0], head[1], head[2], torch::randn({32, 9}), head[4]});
  expect_load_error<CorruptFile>(dir, "not W2 of shape 32 x 9");
  install_mlp_head(dir, {head[0], torch::randn({8}), head[2], head[3], head[4]});
  expect_load_error<CorruptFile>(dir, "not W1 of shape 8");
  install_mlp_head(dir, head, HeadKind::kLinear);
  expect_load_error<CorruptFile>(dir, "(here 32 x 32), not 5 tensors (does the manifest's head_kind match the head file?)");
  install_mlp_head(dir, head);
  auto manifest = nlohmann::json::parse(read_file(join_path(dir, "manifest.json")));
  manifest["head_kind"] = "deep";
  write_file_atomic(join_path(dir, "manifest.json"), manifest.dump(2));
  expect_load_error<CorruptFile>(dir, "manifest.json: unknown head kind 'deep' (expected linear or mlp)");
}

TEST(BertEncoder, AHeadWithoutAChecksumIsRefusedBeforeItIsRead) {
  const std::string dir = fixture_copy();
  auto manifest = nlohmann::json::parse(read_file(join_path(dir, "manifest.json")));
  manifest["head_file"] = "head.pt";
  write_file_atomic(join_path(dir, "manifest.json"), manifest.dump(2));
  expect_load_error<CorruptFile>(dir, "'head.pt' has no checksum in 'files'");
}

// A head Es over E's own network (sparse-default over all-minilm-l6-v2) needs one forward pass
// for both: encode_both gives exactly the rows of the two encode calls.
TEST(BertEncoder, AHeadOverTheSameNetworkEncodesBothEmbeddingsInOnePass) {
  const std::string plain_dir = kFixture;
  const std::string head_dir = fixture_copy();
  torch::manual_seed(9);
  install_head(head_dir, torch::randn({32, 32}));
  auto dense = Encoder::load(plain_dir, EncoderConfig{1});
  auto sparse = Encoder::load(head_dir, EncoderConfig{1});
  ASSERT_TRUE(dense->shares_network_with(*sparse));
  ASSERT_TRUE(sparse->shares_network_with(*dense));
  const auto texts = texts_of(expected_sentences());
  EncodeOptions options;
  options.batch_size = 3;
  const auto [e, es] = Encoder::encode_both(*dense, *sparse, texts, options);
  const Matrix e_alone = dense->encode(texts, options), es_alone = sparse->encode(texts, options);
  EXPECT_EQ(e.values(), e_alone.values());
  EXPECT_EQ(es.values(), es_alone.values());
  EXPECT_NE(e.values(), es.values());

  // Another query prefix feeds the network other input: two passes, the same rows as ever.
  rewrite_manifest(head_dir, [](ModelManifest& m) { m.query_prefix = "Not true: "; });
  auto prefixed = Encoder::load(head_dir, EncoderConfig{1});
  EXPECT_FALSE(dense->shares_network_with(*prefixed));
  options.role = TextRole::kQuery;
  const auto [qe, qes] = Encoder::encode_both(*dense, *prefixed, texts, options);
  EXPECT_EQ(qes.values(), prefixed->encode(texts, options).values());
  EXPECT_EQ(qe.values(), dense->encode(texts, options).values());
}

// A corpus goes through a network once: E's rows and a head Es's rows come from the cached
// features of the same texts, equal to what the encoders compute (to float rounding, since a
// batch of other texts pads differently), and a setting that changes features misses the cache.
TEST(FeatureCache, RowsOfEAndOfAHeadOverItComeFromOneCachedPass) {
  const std::string cache_dir = (fs::temp_directory_path() / "counterpoint_feature_cache_test").string();
  fs::remove_all(cache_dir);
  const std::string head_dir = fixture_copy();
  torch::manual_seed(11);
  install_head(head_dir, torch::randn({32, 32}));
  auto dense = Encoder::load(kFixture, EncoderConfig{1});
  auto sparse = Encoder::load(head_dir, EncoderConfig{1});
  const auto texts = texts_of(expected_sentences());
  EXPECT_EQ(dense->feature_key(), sparse->feature_key());

  FeatureCache cache(cache_dir);
  const auto [e, es] = cache.encode_both(*dense, *sparse, texts);
  EXPECT_EQ(cache.misses(), texts.size());
  EXPECT_EQ(cache.hits(), 0u);
  const Matrix e_direct = dense->encode(texts), es_direct = sparse->encode(texts);
  for (std::size_t i = 0; i < e.values().size(); ++i) {
    EXPECT_NEAR(e.values()[i], e_direct.values()[i], 1e-5);
    EXPECT_NEAR(es.values()[i], es_direct.values()[i], 1e-5);
  }

  FeatureCache again(cache_dir);  // another process reading what the first kept
  const Matrix es_cached = again.encode(*sparse, {texts[2], texts[0], texts[2]});
  EXPECT_EQ(again.hits(), 3u);
  EXPECT_EQ(again.misses(), 0u);
  for (std::size_t j = 0; j < 32; ++j) EXPECT_NEAR(es_cached(1, j), es(0, j), 1e-6);

  EncodeOptions query;
  query.role = TextRole::kQuery;
  rewrite_manifest(head_dir, [](ModelManifest& m) { m.query_prefix = "Not true: "; });
  auto prefixed = Encoder::load(head_dir, EncoderConfig{1});
  EXPECT_NE(prefixed->feature_key(query), dense->feature_key(query));
  again.encode(*prefixed, {texts[0]}, query);
  EXPECT_EQ(again.misses(), 1u);
  fs::remove_all(cache_dir);
}

// The cache only saves time: a folder that cannot be made (here: under a regular file) leaves the
// rows right and says so on stderr.
TEST(FeatureCache, AFolderThatCannotBeWrittenCostsTimeNotTheResult) {
  const std::string file = (fs::temp_directory_path() / "counterpoint_feature_cache_file").string();
  write_file_atomic(file, "a file, not a folder");
  auto dense = Encoder::load(kFixture, EncoderConfig{1});
  FeatureCache cache(file + "/cache");
  const auto texts = texts_of(expected_sentences());
  const Matrix rows = cache.encode(*dense, texts);
  const Matrix direct = dense->encode(texts);
  for (std::size_t i = 0; i < rows.values().size(); ++i) EXPECT_NEAR(rows.values()[i], direct.values()[i], 1e-5);
  fs::remove(file);
}

TEST(FeatureCache, AFileOfAnotherWidthIsCorruptNotReadAsFeatures) {
  const std::string cache_dir = (fs::temp_directory_path() / "counterpoint_feature_cache_bad").string();
  fs::remove_all(cache_dir);
  auto dense = Encoder::load(kFixture, EncoderConfig{1});
  fs::create_directories(cache_dir + "/features");
  write_file_atomic(cache_dir + "/features/" + dense->feature_key() + ".v2.bin", "counterpoint-features/2 16\n");
  FeatureCache cache(cache_dir);
  EXPECT_THROW(cache.encode(*dense, {"a text"}), CorruptFile);
  fs::remove_all(cache_dir);
}

TEST(BertEncoder, ANetworkProducingNaNIsRefusedAtEncodeWithTheModelNamed) {
  const std::string dir = fixture_copy();
  install_head(dir, torch::full({32, 32}, std::numeric_limits<float>::quiet_NaN()));
  auto encoder = Encoder::load(dir, EncoderConfig{1});
  try {
    encoder->encode({"a text"});
    FAIL() << "no CorruptFile";
  } catch (const CorruptFile& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite embedding"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(encoder->manifest().name), std::string::npos);
  }
}

// Indexes, caches and Milvus collections record the identity; models that name no special tokens
// (every BERT model) must keep the one they had before manifests could name them.
TEST(BertEncoder, TheIdentityIsTheOneRecordedBeforeManifestsNamedSpecialTokens) {
  const auto encoder = Encoder::load(kFixture, EncoderConfig{1});
  EXPECT_EQ(encoder->identity(), "bert-tiny-random@7d7caf47f39c#dc417df80e5f");
  EXPECT_EQ(encoder->settings().find("tokenizer_specials"), std::string::npos);
}

// ---- MPNet: tests/fixtures/mpnet_tiny, the random checkpoint of mpnet_tiny_golden.json converted
// (tests/python/test_mpnet_converter.py --write-fixture); the golden holds the ids of its Hugging
// Face tokenizer and the mean-pooled, normalised states of transformers' MPNetModel.

const std::string kMpnetFixture = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/mpnet_tiny";

std::vector<ExpectedSentence> mpnet_golden() {
  const auto j = nlohmann::json::parse(read_file(std::string(COUNTERPOINT_TEST_DATA_DIR) + "/mpnet_tiny_golden.json"));
  std::vector<ExpectedSentence> out;
  for (const auto& s : j.at("texts")) {
    out.push_back({s.at("text").get<std::string>(), s.at("ids").get<std::vector<int64_t>>(),
                   s.at("embedding").get<std::vector<float>>()});
  }
  return out;
}

TEST(MpnetEncoder, TokensAndEmbeddingsAreTransformersOnesInOneBatchAndOneByOne) {
  const auto golden = mpnet_golden();
  const auto encoder = Encoder::load(kMpnetFixture, EncoderConfig{1});
  EXPECT_EQ(encoder->manifest().architecture, "mpnet");
  EXPECT_EQ(encoder->model().tokenizer().pad_id(), 1);  // <pad>: positions count from 2
  for (const auto& s : golden) EXPECT_EQ(encoder->tokenize(s.text).ids, s.ids) << s.text;
  EncodeOptions one_by_one;
  one_by_one.batch_size = 1;
  for (const EncodeOptions& options : {EncodeOptions{}, one_by_one}) {
    const Matrix rows = encoder->encode(texts_of(golden), options);
    for (std::size_t i = 0; i < golden.size(); ++i) {
      for (std::size_t c = 0; c < 32; ++c) {
        EXPECT_NEAR(rows.row(i)[c], golden[i].embedding[c], 2e-6) << golden[i].text << " dim " << c;
      }
    }
  }
}

TEST(MpnetEncoder, SpecialTokensArePartOfTheIdentityAndAMismatchNamesThem) {
  const auto encoder = Encoder::load(kMpnetFixture, EncoderConfig{1});
  EXPECT_NE(encoder->settings().find("\"tokenizer_specials\""), std::string::npos);
  const fs::path dir = fs::path(::testing::TempDir()) / "cp_mpnet_specials";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* name : {"manifest.json", "model.pt", "vocab.txt"}) fs::copy_file(fs::path(kMpnetFixture) / name, dir / name);
  ModelManifest manifest = ModelManifest::load(dir.string());
  manifest.specials.pair_separators = 1;
  manifest.save(dir.string());
  const auto other = Encoder::load(dir.string(), EncoderConfig{1});
  EXPECT_NE(other->identity(), encoder->identity());
  EXPECT_NE(other->identity_mismatch(encoder->identity(), encoder->settings()).find("tokenizer_specials"),
            std::string::npos)
      << other->identity_mismatch(encoder->identity(), encoder->settings());
  EXPECT_FALSE(other->shares_network_with(*encoder));
}

TEST(MpnetEncoder, AManifestWhoseSpecialsTheVocabularyLacksIsRefusedNamingThePiece) {
  const fs::path dir = fs::path(::testing::TempDir()) / "cp_mpnet_bad_specials";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* name : {"manifest.json", "model.pt", "vocab.txt"}) fs::copy_file(fs::path(kMpnetFixture) / name, dir / name);
  ModelManifest manifest = ModelManifest::load(dir.string());
  manifest.specials.cls = "<cls>";
  manifest.save(dir.string());
  try {
    Encoder::load(dir.string(), EncoderConfig{1});
    FAIL() << "a cls token missing from the vocabulary was accepted";
  } catch (const CorruptFile& e) {
    EXPECT_NE(std::string(e.what()).find("missing special token <cls> (the model's cls token, as its manifest names it)"),
              std::string::npos)
        << e.what();
  }
  auto text = read_file((dir / "manifest.json").string());
  text.replace(text.find("\"cls\""), 5, "\"bos\"");
  EXPECT_THROW(ModelManifest::parse(text, "manifest.json"), CorruptFile);
}

// ---- all-mpnet-base-v2's own vocabulary and tokenizer.json -------------------------------------
// tests/fixtures/text/mpnet_tokenizer_golden.json (models/bert/make_mpnet_golden.py tokenizer): the
// ids of the Hugging Face fast tokenizer of the real model for hostile strings and strings that
// spell its special tokens, and the manifest fields the converter writes for it. The vocabulary is
// bert-base-uncased's behind <s> <pad> </s> <unk>, with <mask> last: it is rebuilt from the
// bert-base-uncased vocabulary set-up installs and checked against the real vocab.txt's SHA-256.
TEST(MpnetVocabulary, TheRealTokenizerGivesTheReferenceIdsForSinglesAndPairs) {
  const char* bert_vocab = std::getenv("COUNTERPOINT_BERT_VOCAB");
  if (bert_vocab == nullptr || *bert_vocab == '\0') {
    GTEST_SKIP() << "COUNTERPOINT_BERT_VOCAB is unset: run models/bert_vocab/fetch_vocab.sh DIR and point it at "
                    "DIR/vocab.txt";
  }
  const auto golden = nlohmann::json::parse(
      read_file(std::string(COUNTERPOINT_TEST_DATA_DIR) + "/text/mpnet_tokenizer_golden.json"));
  std::string vocab;
  for (const auto& piece : golden.at("vocab_head")) vocab += piece.get<std::string>() + "\n";
  vocab += read_file(bert_vocab);
  for (const auto& piece : golden.at("vocab_tail")) vocab += piece.get<std::string>() + "\n";
  ASSERT_EQ(sha256_hex(vocab), golden.at("vocab_sha256").get<std::string>());
  const fs::path dir = fs::path(::testing::TempDir()) / "cp_mpnet_vocab";
  fs::create_directories(dir);
  write_file_atomic((dir / "vocab.txt").string(), vocab);

  nlohmann::json tokenizer = golden.at("tokenizer");
  tokenizer["kind"] = "wordpiece";
  tokenizer["file"] = "vocab.txt";
  tokenizer["lowercase"] = golden.at("lowercase");
  const std::string fake_sha(64, '0');
  const nlohmann::json manifest_json = {
      {"format", "counterpoint-model"}, {"format_version", 1}, {"name", "all-mpnet-base-v2"},
      {"architecture", "mpnet"}, {"embedding_dim", 768}, {"max_length", 384}, {"pooling", "mean"},
      {"tokenizer", tokenizer}, {"license", "Apache-2.0"}, {"files", {{"model.pt", fake_sha}, {"vocab.txt", fake_sha}}}};
  const ModelManifest manifest = ModelManifest::parse(manifest_json.dump(), "manifest.json");
  const auto t = load_tokenizer("wordpiece", (dir / "vocab.txt").string(), manifest.lowercase, manifest.specials);
  ASSERT_EQ(t->vocab_size(), golden.at("vocab_pieces").get<std::size_t>());
  EXPECT_EQ(t->pad_id(), 1);
  std::size_t checked = 0;
  for (const auto& single : golden.at("single")) {
    const std::string text = single.at("text").get<std::string>();
    EXPECT_EQ(t->encode(text, 0).ids, single.at("ids").get<std::vector<int64_t>>()) << text;
    ++checked;
  }
  EXPECT_EQ(checked, 82u);
  for (const auto& pair : golden.at("pairs")) {
    EXPECT_EQ(t->encode_pair(pair.at("a").get<std::string>(), pair.at("b").get<std::string>(), 0).ids,
              pair.at("ids").get<std::vector<int64_t>>())
        << pair.at("a");
  }
  // Cut to 384 as sentence-transformers truncates: <s>, 382 pieces, </s>.
  std::string words;
  for (int i = 0; i < 500; ++i) words += "word ";
  const Encoding cut = t->encode(words, 384);
  EXPECT_EQ(cut.ids.size(), 384u);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.ids.front(), 0);
  EXPECT_EQ(cut.ids[382], 2777);  // "word"
  EXPECT_EQ(cut.ids.back(), 2);
}

TEST(BertEncoder, MissingDirectoryIsFileNotFound) {
  const std::string dir = kFixture + "_does_not_exist";
  expect_load_error<FileNotFound>(dir, "model '" + dir + "' not found as a directory nor in the models folders");
}

}  // namespace
}  // namespace counterpoint
