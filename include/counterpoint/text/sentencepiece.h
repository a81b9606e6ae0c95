// counterpoint/text/sentencepiece.h: SentencePiece models, kind "sentencepiece".
// Debian's libsentencepiece carries its own protobuf, which clashes with libtorch's, so the
// library is never linked into counterpoint: it lives in the plugin
// libcounterpoint_sentencepiece.so, opened with dlopen(RTLD_LOCAL | RTLD_DEEPBIND). The plugin
// is looked for in $COUNTERPOINT_PLUGIN_DIR, then next to the module holding this code, then
// in ../lib from there, then in the build's plugin directory.
// Encoding adds no special tokens; type ids are 0; truncation keeps the first max_length ids.
// pad_id() is the model's pad id, or 0 when the model defines none (padded positions are
// masked, so any valid id serves).
#pragma once

#include <memory>
#include <string>

#include "counterpoint/text/tokenizer.h"

namespace counterpoint {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // FileNotFound if the model or the plugin is missing (the message lists the places tried),
  // CorruptFile if SentencePiece cannot read the model.
  explicit SentencePieceTokenizer(const std::string& model_path);
  ~SentencePieceTokenizer() override;
  SentencePieceTokenizer(const SentencePieceTokenizer&) = delete;
  SentencePieceTokenizer& operator=(const SentencePieceTokenizer&) = delete;

  Encoding encode(std::string_view text, std::size_t max_length) const override;
  int64_t pad_id() const override;
  std::size_t vocab_size() const override;
  std::string kind() const override { return "sentencepiece"; }
  int64_t unk_id() const;

  // Full path of the plugin in use (loads it on first call).
  static std::string plugin_path();

 private:
  struct Model;
  std::unique_ptr<Model> model_;
};

}  // namespace counterpoint
