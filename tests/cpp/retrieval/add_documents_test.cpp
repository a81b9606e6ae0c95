// add_documents is all or nothing: a call that fails (an id already in the index, an id twice in
// the call, an empty id) or is cancelled through its progress callback leaves the index exactly
// as it was, and its message names the position in the caller's list, whichever encoding batch
// the item falls in.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/retrieval/retriever.h"
#include "message_of.h"

using namespace counterpoint;
using namespace counterpoint::retrieval;
using counterpoint::test_support::message_of;

namespace {

const std::shared_ptr<Encoder>& tiny() {
  static const auto encoder =
      Encoder::load(std::string(COUNTERPOINT_TEST_DATA_DIR) + "/training/tiny-model", EncoderConfig{1});
  return encoder;
}

struct Corpus {
  std::vector<std::string> ids, texts;
};

Corpus corpus(std::size_t n, const std::string& prefix) {
  Corpus c;
  for (std::size_t i = 0; i < n; ++i) {
    c.ids.push_back(prefix + std::to_string(i));
    c.texts.push_back("the man is playing guitar number " + std::to_string(i));
  }
  return c;
}

std::shared_ptr<index::DocumentIndex> index_with_two() {
  auto idx = std::make_shared<index::DocumentIndex>(index_options_for(*tiny(), tiny().get()));
  add_documents(*idx, {"a dog", "a cat"}, {"a", "b"}, *tiny(), tiny().get());
  return idx;
}


}  // namespace

TEST(AddDocuments, AnIdAlreadyInTheIndexAddsNothingFromAnyBatch) {
  auto idx = index_with_two();
  Corpus c = corpus(12, "d");
  c.ids[10] = "a";  // in the sixth batch of two
  const auto message = message_of<Error>([&] { add_documents(*idx, c.texts, c.ids, *tiny(), tiny().get(), 2); });
  EXPECT_EQ(message, "add_documents: id 'a' (item 10) is already in the index");
  EXPECT_EQ(idx->size(), 2u);
}

TEST(AddDocuments, AnIdTwiceInOneCallIsNamedAsSuchWithBothItems) {
  auto idx = index_with_two();
  Corpus c = corpus(18, "d");
  c.ids[17] = c.ids[3];
  const auto message = message_of<Error>([&] { add_documents(*idx, c.texts, c.ids, *tiny(), tiny().get(), 4); });
  EXPECT_EQ(message, "add_documents: id 'd3' appears twice in this call (items 3 and 17)");
  EXPECT_EQ(idx->size(), 2u);
}

TEST(AddDocuments, AnEmptyIdIsNamedByItsPositionInTheCall) {
  auto idx = index_with_two();
  Corpus c = corpus(18, "d");
  c.ids[17] = "";
  const auto message = message_of<Error>([&] { add_documents(*idx, c.texts, c.ids, *tiny(), tiny().get(), 4); });
  EXPECT_EQ(message, "add_documents: item 17 has an empty id");
  EXPECT_EQ(idx->size(), 2u);
}

TEST(AddDocuments, CancellingMidwayAddsNothing) {
  auto idx = index_with_two();
  const Corpus c = corpus(290, "d");
  std::size_t calls = 0;
  const ProgressCallback stop_after_two = [&](std::size_t, std::size_t) { return ++calls < 2; };
  EXPECT_THROW(add_documents(*idx, c.texts, c.ids, *tiny(), tiny().get(), 128, stop_after_two), Cancelled);
  EXPECT_EQ(idx->size(), 2u);
  EXPECT_FALSE(idx->contains("d0"));
  add_documents(*idx, c.texts, c.ids, *tiny(), tiny().get(), 128);  // the same call, uncancelled
  EXPECT_EQ(idx->size(), 292u);
}
