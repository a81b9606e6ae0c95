// Fuzzes the USE-lite unigram tokenizer on arbitrary bytes. Input: byte 0 picks max_length,
// the rest is the text. Invalid UTF-8 must throw InvalidArgument; otherwise every id is in the
// vocabulary, no two id-0 (unknown) tokens are adjacent and truncation keeps <= max_length ids.
#include <cstdint>
#include <string_view>

#include "counterpoint/core/errors.h"
#include "counterpoint/text/use_unigram.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto tok =
      counterpoint::UseUnigramTokenizer::from_file(COUNTERPOINT_FUZZ_DATA_DIR "/vocab/use_unigram.json");
  if (size < 1) return 0;
  const std::size_t max_length = data[0] % 12;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const counterpoint::Encoding e = tok.encode(text, max_length);
    FUZZ_CHECK(e.ids.size() == e.type_ids.size());
    if (max_length > 0) FUZZ_CHECK(e.ids.size() <= max_length);
    for (std::size_t i = 0; i < e.ids.size(); ++i) {
      FUZZ_CHECK(e.ids[i] >= 0 && std::size_t(e.ids[i]) < tok.vocab_size());
      if (i > 0) FUZZ_CHECK(!(e.ids[i] == 0 && e.ids[i - 1] == 0));
    }
  } catch (const counterpoint::InvalidArgument&) {
  }
  return 0;
}
