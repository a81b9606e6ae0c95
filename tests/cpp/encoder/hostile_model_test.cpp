// Model files are input. The networks in tests/fixtures/hostile_models (made by
// make_hostile_models.py) are well-formed for the one-text probe at load time and change the
// shape or type of an output once a batch holds several texts. Every one must end in CorruptFile
// naming the model, the observed and the expected shape, on encode and on encode_tokens: before
// these checks, some aborted the process (malloc(): invalid size) and others returned rows read
// past the end of the tensor. The ASan/UBSan build runs these too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/encoder/encoder.h"

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

}  // namespace
}  // namespace counterpoint
