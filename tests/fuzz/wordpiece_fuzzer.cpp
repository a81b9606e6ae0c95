// Fuzzes WordPieceTokenizer on arbitrary bytes: single texts, pairs and truncation.
// Input: byte 0 picks lower-casing and max_length, byte 1 where a pair is split, the rest is
// the text. Invalid UTF-8 must throw InvalidArgument; everything else must encode into ids of
// the vocabulary with matching type ids and pieces, within max_length.
#include <cstdint>
#include <string>
#include <string_view>

#include "counterpoint/core/errors.h"
#include "counterpoint/text/wordpiece.h"
#include "fuzz_support.h"

namespace {

const counterpoint::WordPieceTokenizer& tokenizer(bool lowercase) {
  static const auto lower =
      counterpoint::WordPieceTokenizer::from_file(COUNTERPOINT_FUZZ_DATA_DIR "/vocab/wordpiece.txt", true);
  static const auto cased =
      counterpoint::WordPieceTokenizer::from_file(COUNTERPOINT_FUZZ_DATA_DIR "/vocab/wordpiece.txt", false);
  return lowercase ? lower : cased;
}

void check(const counterpoint::Encoding& e, std::size_t max_length, std::size_t vocab_size) {
  FUZZ_CHECK(e.ids.size() == e.type_ids.size());
  FUZZ_CHECK(e.ids.size() == e.pieces.size());
  if (max_length > 0) FUZZ_CHECK(e.ids.size() <= max_length);
  for (const int64_t id : e.ids) FUZZ_CHECK(id >= 0 && std::size_t(id) < vocab_size);
  for (const int64_t t : e.type_ids) FUZZ_CHECK(t == 0 || t == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const bool lowercase = data[0] & 1;
  const std::size_t max_length = (data[0] >> 1) % 16;  // 0 = no limit; small limits hit truncation
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::size_t split = text.empty() ? 0 : data[1] % (text.size() + 1);
  const auto& tok = tokenizer(lowercase);
  try {
    check(tok.encode(text, max_length), max_length, tok.vocab_size());
    const auto pieces = tok.tokenize(text);
    for (const auto& piece : pieces) FUZZ_CHECK(tok.piece_id(piece) >= 0);
  } catch (const counterpoint::InvalidArgument&) {
  }
  try {
    const std::size_t pair_limit = max_length == 0 ? 0 : max_length + 3;  // pairs need 3 specials
    check(tok.encode_pair(text.substr(0, split), text.substr(split), pair_limit), pair_limit, tok.vocab_size());
  } catch (const counterpoint::InvalidArgument&) {
  }
  return 0;
}
