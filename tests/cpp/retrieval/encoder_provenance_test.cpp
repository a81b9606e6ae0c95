// An index remembers which models its rows came from (Encoder::identity: the weights and every
// manifest setting that changes the embeddings) and refuses rows or queries from any other model,
// even one of the same width: mixing them would rank silently wrong. Indexes without a record
// (saved before it existed) accept any model of their width; those recorded before the settings
// were part of the identity accept the model whose files match.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <regex>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/retrieval/retriever.h"
#include "../index/index_test_support.h"  // rewrite_header
#include "message_of.h"

namespace counterpoint::retrieval {
namespace {

namespace fs = std::filesystem;
using index::test_support::rewrite_header;
using test_support::message_of;
const std::string kBertTiny = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";

// Under the running test's own folder: ctest runs this binary's tests in parallel processes, and two
// tests sharing "renamed-model" used to remove each other's copy mid-test.
std::string scratch(const std::string& name) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/provenance_test/" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(fs::path(dir).parent_path());
  return dir;
}

// A copy of the fixture whose manifest is edited by `edit` (its files, and so their checksums, unchanged).
std::string edited_copy(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  const std::string dir = scratch(name);
  fs::copy(kBertTiny, dir, fs::copy_options::recursive);
  auto manifest = nlohmann::json::parse(read_file(dir + "/manifest.json"));
  edit(manifest);
  write_file_atomic(dir + "/manifest.json", manifest.dump(2));
  return dir;
}

// The same network under another manifest name: same width, different identity.
std::shared_ptr<Encoder> renamed_copy() {
  return Encoder::load(edited_copy("renamed-model", [](nlohmann::json& m) { m["name"] = "bert-tiny-renamed"; }));
}


TEST(EncoderProvenance, IdentityIsTheManifestNameTheWeightsChecksumAndTheSettingsDigest) {
  auto encoder = Encoder::load(kBertTiny);
  const std::string weights = sha256_file(join_path(kBertTiny, "model.pt")).substr(0, 12);
  EXPECT_TRUE(std::regex_match(encoder->identity(), std::regex("bert-tiny-random@" + weights + "#[0-9a-f]{12}")))
      << encoder->identity();
  const auto settings = nlohmann::json::parse(encoder->settings());
  EXPECT_EQ(settings["pooling"], "cls");
  EXPECT_EQ(settings["weights"], "model.pt");
  EXPECT_EQ(settings["max_length"], 64);
  const auto options = index_options_for(*encoder, encoder.get());
  EXPECT_EQ(options.dim, encoder->dim());
  EXPECT_EQ(options.sparse_dim, encoder->dim());
  EXPECT_EQ(options.encoder_id, encoder->identity());
  EXPECT_EQ(options.sparse_encoder_id, encoder->identity());
  EXPECT_EQ(options.encoder_settings, encoder->settings());
  EXPECT_EQ(options.sparse_encoder_settings, encoder->settings());
}

// The issue's reproduction: a copy of the model with another pooling, lower-casing or max_length in
// its manifest (same weights, same name) was accepted to search an index of the original, and the
// scores changed. Each is refused, naming the setting in the user's terms.
TEST(EncoderProvenance, AManifestThatReadsTheSameWeightsAnotherWayIsAnotherModel) {
  auto encoder = Encoder::load(kBertTiny);
  const std::string dir = scratch("settings-index");
  index::DocumentIndex built(index_options_for(*encoder));
  add_documents(built, {"the cat sleeps", "The Dog Barks loudly"}, {"a", "b"}, *encoder, nullptr);
  built.save(dir);
  auto loaded = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(dir));
  EXPECT_NO_THROW(Retriever(loaded, encoder));
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& m) { m["pooling"] = "mean"; }, "was built with pooling cls; model bert-tiny-random pools mean"},
      {[](nlohmann::json& m) { m["tokenizer"]["lowercase"] = false; },
       "was built with lowercase true; model bert-tiny-random has lowercase false"},
      {[](nlohmann::json& m) { m["max_length"] = 2; },
       "was built with max_length 64; model bert-tiny-random has max_length 2"},
      {[](nlohmann::json& m) { m["query_prefix"] = "query: "; },
       "was built with query_prefix ''; model bert-tiny-random has query_prefix 'query: '"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto other = Encoder::load(edited_copy("settings-" + std::to_string(i), cases[i].first));
    EXPECT_NE(other->identity(), encoder->identity()) << cases[i].second;
    const std::string error = message_of([&] { Retriever(loaded, other); });
    EXPECT_THAT(error, ::testing::HasSubstr("the index " + cases[i].second)) << error;
    EXPECT_THAT(error, ::testing::HasSubstr(encoder->identity())) << error;
  }
}

// model-int8.pt is other weights: an index of the float model does not take the int8 one.
TEST(EncoderProvenance, TheInt8WeightsAreAnotherIdentity) {
  const std::string dir = edited_copy("int8-model", [](nlohmann::json& m) {
    m["files"]["model-int8.pt"] = m["files"]["model.pt"];  // the same bytes, copied below
  });
  fs::copy_file(join_path(dir, "model.pt"), join_path(dir, "model-int8.pt"));
  auto float_model = Encoder::load(dir);
  EncoderConfig config;
  config.int8 = true;
  auto int8_model = Encoder::load(dir, config);
  EXPECT_NE(int8_model->identity(), float_model->identity());
  auto index = std::make_shared<index::DocumentIndex>(index_options_for(*float_model));
  const std::string error = message_of([&] { Retriever(index, int8_model); });
  EXPECT_THAT(error, ::testing::HasSubstr("the index was built with weights 'model.pt'; model bert-tiny-random has "
                                          "weights 'model-int8.pt'"))
      << error;
}

// Indexes saved before identities covered the settings record "name@weights" and no settings: they
// keep loading with the model whose files match (nobody re-encodes a corpus for nothing), and are
// still refused with another model.
TEST(EncoderProvenance, AnIndexRecordedBeforeTheSettingsKeepsWorkingWithItsModel) {
  auto encoder = Encoder::load(kBertTiny);
  const std::string dir = scratch("old-format-index");
  index::DocumentIndex built(index_options_for(*encoder, encoder.get()));
  add_documents(built, {"the cat sleeps"}, {"a"}, *encoder, encoder.get());
  built.save(dir);
  const std::string old_identity =
      "bert-tiny-random@" + sha256_file(join_path(kBertTiny, "model.pt")).substr(0, 12);
  rewrite_header(dir, [&](nlohmann::json& header) {
    auto& options = header["options"];
    options["encoder_id"] = old_identity;
    options["sparse_encoder_id"] = old_identity;
    options.erase("encoder_settings");
    options.erase("sparse_encoder_settings");
  });
  auto old = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(dir));
  EXPECT_EQ(old->options().encoder_id, old_identity);
  EXPECT_EQ(old->options().encoder_settings, "");
  EXPECT_EQ(encoder->identity_mismatch(old_identity, ""), "");
  EXPECT_NO_THROW(Retriever(old, encoder, encoder));
  add_documents(*old, {"the dog barks"}, {"b"}, *encoder, encoder.get());
  EXPECT_EQ(old->size(), 2u);

  auto renamed = renamed_copy();
  EXPECT_THAT(message_of([&] { Retriever(old, renamed); }),
              ::testing::HasSubstr("the index was built with model bert-tiny-random, not bert-tiny-renamed"));
  const std::string other_weights = "bert-tiny-random@0123456789ab";
  EXPECT_THAT(encoder->identity_mismatch(other_weights, ""),
              ::testing::HasSubstr("was built with bert-tiny-random@0123456789ab, another version of bert-tiny-random"));
}

TEST(EncoderProvenance, RecordedSettingsThatAreNotAnObjectAreCorrupt) {
  auto encoder = Encoder::load(kBertTiny);
  const std::string dir = scratch("bad-settings-index");
  index::DocumentIndex(index_options_for(*encoder)).save(dir);
  rewrite_header(dir, [&](nlohmann::json& header) { header["options"]["encoder_settings"] = "pooling cls"; });
  try {
    index::DocumentIndex::load(dir);
    FAIL() << "settings that are not an object were accepted";
  } catch (const CorruptFile& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("field 'encoder_settings' is not an object"));
  }
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
