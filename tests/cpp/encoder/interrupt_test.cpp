// Ctrl-C between progress reports (issue #62): the encoder looks at the calling thread's interrupt
// check before every forward pass, so an interrupt lands within one pass of at most
// max_batch_tokens tokens, however many texts the caller's step holds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/progress.h"
#include "counterpoint/encoder/encoder.h"

namespace counterpoint {
namespace {

const std::string kBertTiny = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";

std::vector<std::string> long_texts(std::size_t n) {
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < n; ++i) {
    texts.push_back("passage " + std::to_string(i) + " argues at length that the council should fund new libraries");
  }
  return texts;
}

EncoderConfig one_thread() {
  EncoderConfig config;
  config.threads = 1;
  return config;
}

TEST(EncoderInterrupt, AnInterruptLandsBeforeTheNextPassOfABatch) {
  const auto encoder = Encoder::load(kBertTiny, one_thread());
  EncodeOptions options;
  options.batch_size = 8;        // one batch, one progress report at its end...
  options.max_batch_tokens = 1;  // ...run as 8 passes of one text
  int checks = 0;
  const InterruptScope scope([&checks] { return ++checks == 3; });
  try {
    encoder->encode(long_texts(8), options);
    FAIL() << "the interrupt was not honoured";
  } catch (const Cancelled& e) {
    EXPECT_STREQ(e.what(), "encode interrupted");
  }
  EXPECT_EQ(checks, 3);  // two passes ran, the third did not start
}

TEST(EncoderInterrupt, EveryEncoderEntryLooksBeforeEachPass) {
  const auto encoder = Encoder::load(kBertTiny, one_thread());
  EncodeOptions options;
  options.batch_size = 2;
  int checks = 0;
  const InterruptScope scope([&checks] {
    ++checks;
    return false;
  });
  encoder->encode(long_texts(8), options);
  EXPECT_EQ(checks, 4);
  encoder->encode_tokens(long_texts(8), options);
  EXPECT_EQ(checks, 8);
  Encoder::encode_both(*encoder, *encoder, long_texts(8), options);
  EXPECT_EQ(checks, 12);
}

TEST(EncoderInterrupt, TheCheckEndsWithItsScope) {
  const auto encoder = Encoder::load(kBertTiny, one_thread());
  {
    const InterruptScope scope([] { return true; });
    EXPECT_THROW(encoder->encode(long_texts(2), EncodeOptions{}), Cancelled);
  }
  EXPECT_EQ(encoder->encode(long_texts(2), EncodeOptions{}).rows(), 2u);  // none installed: nothing checked
}

}  // namespace
}  // namespace counterpoint
