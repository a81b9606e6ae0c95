#include "counterpoint/text/tokenizer.h"

#include "counterpoint/core/errors.h"
#include "counterpoint/text/sentencepiece.h"
#include "counterpoint/text/use_unigram.h"
#include "counterpoint/text/wordpiece.h"

namespace counterpoint {

Encoding Tokenizer::encode_pair(std::string_view, std::string_view, std::size_t) const {
  throw InvalidArgument("tokenizer kind \"" + kind() + "\" does not support pairs of texts");
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& kind, const std::string& path,
                                          bool lowercase, const SpecialTokens& specials) {
  if (kind == "wordpiece") {
    return std::make_unique<WordPieceTokenizer>(WordPieceTokenizer::from_file(path, lowercase, specials));
  }
  if (!specials.is_bert()) {
    // The other kinds' files name their own specials; one given here would be ignored silently.
    throw InvalidArgument("tokenizer kind \"" + kind + "\" takes its special tokens from " + path +
                          ", not from the manifest (only wordpiece models name them there)");
  }
  if (kind == "use-unigram") {
    return std::make_unique<UseUnigramTokenizer>(UseUnigramTokenizer::from_file(path));
  }
  if (kind == "sentencepiece") {
    return std::make_unique<SentencePieceTokenizer>(path);
  }
  throw InvalidArgument("unknown tokenizer kind \"" + kind +
                        "\" (known kinds: wordpiece, use-unigram, sentencepiece)");
}

}  // namespace counterpoint
