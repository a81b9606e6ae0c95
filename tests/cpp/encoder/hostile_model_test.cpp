// Model files are input. The networks in tests/fixtures/hostile_models (made by
// make_hostile_models.py) are well-formed for the one-text probe at load time and change the
// shape or type of an output once a batch holds several texts. Every one must end in CorruptFile
// naming the model, the observed and the expected shape, on encode and on encode_tokens: before
// these checks, some aborted the process (malloc(): invalid size) and others returned rows read
// past the end of the tensor. The ASan/UBSan build runs these too.
#include <gtest/gtest.h>
#include <torch/script.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/manifest.h"
#include "message_of.h"

namespace counterpoint {
namespace {

const std::vector<std::string> kBatch = {"the man is playing guitar", "a dog", "the woman is not eating food"};

class HostileModel : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<Encoder> load() const {
    return Encoder::load(std::string(COUNTERPOINT_TEST_DATA_DIR) + "/hostile_models/" + GetParam(), EncoderConfig{1});
  }
};

template <typename Call>
void expect_corrupt_output(Call call, const std::string& model) {
  try {
    call();
    FAIL() << model << ": a batch of 3 texts was accepted";
  } catch (const CorruptFile& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("hostile-" + model), std::string::npos) << message;
    EXPECT_NE(message.find("expected ["), std::string::npos) << message;
    EXPECT_NE(message.find("for a batch of shape [3, "), std::string::npos) << message;
  }
}

TEST_P(HostileModel, LoadsButEveryMisshapenBatchIsRefused) {
  auto encoder = load();
  EXPECT_EQ(encoder->encode({"one text"}).rows(), 1u);  // the shape the probe saw
  EncodeOptions whole_batch;
  whole_batch.batch_size = kBatch.size();
  expect_corrupt_output([&] { encoder->encode(kBatch, whole_batch); }, GetParam());
  expect_corrupt_output([&] { encoder->encode_tokens(kBatch, whole_batch); }, GetParam());
}

TEST_P(HostileModel, OneTextBatchesStayWellFormed) {
  auto encoder = load();
  EncodeOptions one_by_one;
  one_by_one.batch_size = 1;
  EXPECT_EQ(encoder->encode(kBatch, one_by_one).rows(), kBatch.size());
  EXPECT_EQ(encoder->encode_tokens(kBatch, one_by_one).size(), kBatch.size());
}

INSTANTIATE_TEST_SUITE_P(ShapeChangingNetworks, HostileModel,
                         ::testing::Values("token_width_grows", "token_length_differs", "pooled_width_grows",
                                           "pooled_narrower", "one_pooled_row", "integer_outputs",
                                           "float16_outputs", "meta_outputs", "sparse_outputs"),
                         [](const auto& info) { return info.param; });

// Model directories made here: a copy of a fixture whose files are replaced or whose manifest is
// edited, every checksum resealed, so that only a check of what the files hold can refuse them.
namespace fs = std::filesystem;
using test_support::message_of;

const fs::path kBertTiny = fs::path(COUNTERPOINT_TEST_DATA_DIR) / "bert_tiny";
// make_hostile_models.py's manifest: the tiny test vocabulary, embedding_dim 4, token_dim 8, and
// the network's own pooled output as the embedding.
const fs::path kPooledByTheNetwork = fs::path(COUNTERPOINT_TEST_DATA_DIR) / "hostile_models" / "token_width_grows";

// Saves a TorchScript module whose code is `source`: it holds no tensors unless its code makes them.
void save_script(const std::string& source, const fs::path& path) {
  torch::jit::Module module("Scripted");
  module.define(source);
  module.save(path.string());
}

class ForgedModel : public ::testing::Test {
 protected:
  // A copy of the model directory `base`, named "forged", unique to the running test; `network`,
  // when given, is the TorchScript source that replaces its model.pt.
  void copy_of(const fs::path& base, const std::string& network = "") {
    dir_ = fs::path(::testing::TempDir()) /
           ("cp_forged_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::copy(base, dir_);
    if (!network.empty()) save_script(network, dir_ / "model.pt");
    reseal([](ModelManifest& m) { m.name = "forged"; });
  }
  // Edits the manifest and records every file's checksum anew.
  template <typename Edit>
  void reseal(Edit edit) {
    const std::string manifest = path("manifest.json");
    ModelManifest m = ModelManifest::parse(read_file(manifest), manifest);
    edit(m);
    m.save(dir_.string());
  }
  std::shared_ptr<Encoder> load() const { return Encoder::load(dir_.string(), EncoderConfig{1}); }
  std::string load_refusal() const {
    return message_of<CorruptFile>([this] { load(); });
  }
  std::string path(const std::string& file) const { return (dir_ / file).string(); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

const std::string kNoTensors = " holds no tensors (a head file is torch.save of the tensor W, or of the list W, W1, b1, "
                               "W2, b2)";

// Any TorchScript archive reads as a tensor list, an empty one when it holds no tensors under the
// list's keys: such a head was taken for no head at all, and the model encoded as its network.
TEST_F(ForgedModel, TheNetworkNamedAsTheHeadIsCorruptNotNoHead) {
  copy_of(kBertTiny);
  reseal([](ModelManifest& m) { m.head_file = "model.pt"; });
  EXPECT_EQ(load_refusal(), "the head " + path("model.pt") + kNoTensors);
}

TEST_F(ForgedModel, AScriptedModuleWithoutTensorsAsTheHeadIsCorruptNotNoHead) {
  copy_of(kBertTiny);
  save_script("def forward(self, x):\n    return x\n", dir_ / "head.pt");
  reseal([](ModelManifest& m) {
    m.head_file = "head.pt";
    m.files["head.pt"] = "";
  });
  EXPECT_EQ(load_refusal(), "the head " + path("head.pt") + kNoTensors);
}

const std::string kCannotNormalise =
    " too large to normalise (NaN, infinity, or components whose squares overflow a float32, as +-3e38 do); its "
    "weights are damaged or the network is not one this library can run";

// Finite outputs whose squared norm overflows float32 were normalised by an infinite norm to rows
// of zeros: every search score 0, with no error.
TEST_F(ForgedModel, OutputsTooLargeToNormaliseAreRefused) {
  copy_of(kPooledByTheNetwork, R"(
def forward(self, input_ids, attention_mask):
    b = input_ids.size(0)
    t = input_ids.size(1)
    pooled = torch.full([b, 4], 3e38)
    pooled[:, 1] = -3e38
    return torch.full([b, t, 8], -3e38), pooled
)");
  auto encoder = load();
  EXPECT_EQ(message_of<CorruptFile>([&] { encoder->encode({"a dog"}); }),
            "model forged produced a non-finite embedding or one" + kCannotNormalise);
  EncodeOptions raw;
  raw.normalize = false;  // the rows would overflow every dot product taken of them
  EXPECT_EQ(message_of<CorruptFile>([&] { encoder->encode({"a dog"}, raw); }),
            "model forged produced a non-finite embedding or one" + kCannotNormalise);
  EXPECT_EQ(message_of<CorruptFile>([&] { encoder->encode_tokens({"a dog"}); }),
            "model forged produced non-finite token states or ones" + kCannotNormalise);
}

// The pooled output was checked and the token states were not: NaN rows reached encode_tokens'
// caller (and a token scorer).
TEST_F(ForgedModel, NaNTokenStatesBesideAFinitePooledOutputAreRefused) {
  copy_of(kPooledByTheNetwork, R"(
def forward(self, input_ids, attention_mask):
    b = input_ids.size(0)
    t = input_ids.size(1)
    return torch.full([b, t, 8], float('nan')), torch.ones([b, 4])
)");
  auto encoder = load();
  EXPECT_EQ(encoder->encode({"a dog"}).rows(), 1u);
  EXPECT_EQ(message_of<CorruptFile>([&] { encoder->encode_tokens({"a dog"}); }),
            "model forged produced non-finite token states or ones" + kCannotNormalise);
}

// Padding is no text's token: what a network leaves there is never returned, so it is not checked.
TEST_F(ForgedModel, NaNOnlyAtPaddedPositionsIsNotARefusal) {
  copy_of(kPooledByTheNetwork, R"(
def forward(self, input_ids, attention_mask):
    b = input_ids.size(0)
    t = input_ids.size(1)
    states = torch.where(attention_mask.unsqueeze(-1) > 0, torch.ones([b, t, 8]), torch.full([b, t, 8], float('nan')))
    return states, torch.ones([b, 4])
)");
  auto encoder = load();
  EncodeOptions one_batch;
  one_batch.batch_size = 2;
  const auto tokens = encoder->encode_tokens({"a", "the man is playing a guitar"}, one_batch);
  ASSERT_EQ(tokens.size(), 2u);
  ASSERT_LT(tokens[0].rows(), tokens[1].rows());  // the first text was padded
  for (const auto& text : tokens) {
    for (float value : text.values()) EXPECT_TRUE(std::isfinite(value));
  }
}

// A network that fails on the load-time probe belongs to another manifest: the failure was a
// RuntimeError about token ids or arguments, which named neither file.
TEST_F(ForgedModel, ANetworkOfAnotherVocabularyIsCorruptNamingTheNetworkAndTheManifest) {
  // A USE-lite-like network (it checks every id against its table) under a WordPiece vocabulary
  // whose [CLS] id is past that table.
  copy_of(kBertTiny, R"(
def forward(self, input_ids, attention_mask):
    assert not bool((input_ids >= 2).any()), "input_ids contain a token id outside the vocabulary"
    return torch.ones([input_ids.size(0), input_ids.size(1), 32]), torch.ones([input_ids.size(0), 32])
)");
  EXPECT_EQ(load_refusal(), "model forged: its network " + path("model.pt") + " does not fit its manifest " +
                                path("manifest.json") +
                                ": it fails on the text 'probe' (model forged failed on a batch of shape [1, 3]: "
                                "RuntimeError: AssertionError: input_ids contain a token id outside the vocabulary)");
}

TEST_F(ForgedModel, AForwardOfAnotherSignatureIsCorruptNamingTheNetworkAndTheManifest) {
  copy_of(kBertTiny, R"(
def forward(self, input_ids, attention_mask, extra):
    return torch.ones([input_ids.size(0), input_ids.size(1), 32]), torch.ones([input_ids.size(0), 32])
)");
  EXPECT_EQ(load_refusal(), "model forged: its network " + path("model.pt") + " does not fit its manifest " +
                                path("manifest.json") +
                                ": it fails on the text 'probe' (model forged failed on a batch of shape [1, 3]: "
                                "forward() is missing value for argument 'extra'. Declaration: "
                                "forward(__torch__.Scripted self, Tensor input_ids, Tensor attention_mask, Tensor "
                                "extra) -> ((Tensor, Tensor)))");
}

// training.alpha and training.sparsity_scale are what a search uses when the user gives neither;
// 1e308 is a finite double that becomes an infinite float there, and failed the first search
// ("final_scores: alpha must be finite, got inf") without naming the model or the field.
TEST_F(ForgedModel, RecordedSearchSettingsAreCheckedAtLoadNamingTheModelAndTheField) {
  copy_of(kBertTiny);
  const std::string manifest = path("manifest.json");
  reseal([](ModelManifest& m) { m.training = {{"alpha", 1e308}}; });
  EXPECT_EQ(load_refusal(), manifest + ": model forged records training.alpha 1e+308, not a finite 32-bit number "
                                       "(searches use it when no alpha is given; retune the model or remove the field)");
  reseal([](ModelManifest& m) { m.training = {{"alpha", "high"}}; });
  EXPECT_EQ(load_refusal(), manifest + ": model forged records training.alpha \"high\", not a finite 32-bit number "
                                       "(searches use it when no alpha is given; retune the model or remove the field)");
  reseal([](ModelManifest& m) { m.training = {{"alpha", 0.5}, {"sparsity_scale", -1.0}}; });
  EXPECT_EQ(load_refusal(), manifest + ": model forged records training.sparsity_scale -1.0, not a finite 32-bit "
                                       "number >= 0 (searches use it when no sparsity_scale is given; retune the "
                                       "model or remove the field)");
  reseal([](ModelManifest& m) { m.training = {{"alpha", -3.0e38}, {"sparsity_scale", 0.0}}; });
  EXPECT_EQ(load()->manifest().training.at("alpha").get<double>(), -3.0e38);
}

}  // namespace
}  // namespace counterpoint
