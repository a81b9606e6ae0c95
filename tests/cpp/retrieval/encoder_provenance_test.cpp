// An index remembers which models its rows came from (Encoder::identity) and refuses rows or
// queries from any other model, even one of the same width: mixing them would rank silently
// wrong. Indexes without a record (saved before it existed) accept any model of their width.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::retrieval {
namespace {

namespace fs = std::filesystem;
const std::string kBertTiny = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";

std::string scratch(const std::string& name) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/provenance_test/" + name;
  fs::remove_all(dir);
  fs::create_directories(fs::path(dir).parent_path());
  return dir;
}

// The same network under another manifest name: same width, different identity.
std::shared_ptr<Encoder> renamed_copy() {
  const std::string dir = scratch("renamed-model");
  fs::copy(kBertTiny, dir, fs::copy_options::recursive);
  auto manifest = nlohmann::json::parse(read_file(dir + "/manifest.json"));
  manifest["name"] = "bert-tiny-renamed";
  write_file_atomic(dir + "/manifest.json", manifest.dump(2));
  return Encoder::load(dir);
}

TEST(EncoderProvenance, IdentityIsTheManifestNameAndTheModelChecksumPrefix) {
  auto encoder = Encoder::load(kBertTiny);
  EXPECT_TRUE(std::regex_match(encoder->identity(), std::regex("bert-tiny-random@[0-9a-f]{12}")))
      << encoder->identity();
  const auto options = index_options_for(*encoder, encoder.get());
  EXPECT_EQ(options.dim, encoder->dim());
  EXPECT_EQ(options.sparse_dim, encoder->dim());
  EXPECT_EQ(options.encoder_id, encoder->identity());
  EXPECT_EQ(options.sparse_encoder_id, encoder->identity());
}

TEST(EncoderProvenance, RowsAndQueriesFromAnotherModelAreRefused) {
  auto encoder = Encoder::load(kBertTiny);
  auto other = renamed_copy();
  ASSERT_EQ(other->dim(), encoder->dim());
  auto index = std::make_shared<index::DocumentIndex>(index_options_for(*encoder));
  add_documents(*index, {"the cat sleeps", "the dog barks"}, {"a", "b"}, *encoder, nullptr);
  try {
    add_documents(*index, {"a bird sings"}, {"c"}, *other, nullptr);
    FAIL() << "rows of another model were added";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("bert-tiny-renamed@"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(encoder->identity()), std::string::npos) << e.what();
  }
  EXPECT_EQ(index->size(), 2u);
  EXPECT_THROW(Retriever(index, other), InvalidArgument);
  EXPECT_NO_THROW(Retriever(index, encoder));
}

TEST(EncoderProvenance, SurvivesSaveAndLoadAndUnrecordedIndexesAcceptAnyModelOfTheirWidth) {
  auto encoder = Encoder::load(kBertTiny);
  auto other = renamed_copy();
  const std::string dir = scratch("index");
  index::DocumentIndex recorded(index_options_for(*encoder));
  add_documents(recorded, {"the cat sleeps"}, {"a"}, *encoder, nullptr);
  recorded.save(dir);
  auto loaded = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(dir));
  EXPECT_EQ(loaded->options().encoder_id, encoder->identity());
  EXPECT_EQ(loaded->options().sparse_encoder_id, "");
  EXPECT_THROW(Retriever(loaded, other), InvalidArgument);

  index::IndexOptions unrecorded;
  unrecorded.dim = encoder->dim();
  auto plain = std::make_shared<index::DocumentIndex>(unrecorded);
  add_documents(*plain, {"the cat sleeps"}, {"a"}, *encoder, nullptr);
  add_documents(*plain, {"the dog barks"}, {"b"}, *other, nullptr);
  EXPECT_NO_THROW(Retriever(plain, other));
}

// The one check every face runs when it opens an index with encoders.
TEST(EncoderProvenance, ASparseEncoderForAnIndexWithoutEsAndAnotherTokenWidthAreRefused) {
  auto encoder = Encoder::load(kBertTiny);
  auto plain = std::make_shared<index::DocumentIndex>(index_options_for(*encoder));
  EXPECT_NO_THROW(check_encoders(*plain, encoder.get(), nullptr));
  try {
    check_encoders(*plain, encoder.get(), encoder.get());
    FAIL() << "a sparse encoder was accepted for an index without Es";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("stores no sparse-aware embeddings"), std::string::npos) << e.what();
  }
  auto options = index_options_for(*encoder);
  options.store_token_embeddings = true;
  options.token_dim = encoder->token_dim() + 1;
  index::DocumentIndex tokens(options);
  try {
    check_encoders(tokens, encoder.get(), nullptr);
    FAIL() << "an encoder of another token width was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("token width"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace counterpoint::retrieval
