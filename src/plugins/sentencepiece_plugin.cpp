// The SentencePiece plugin: the only code that links Debian's libsentencepiece. It is loaded
// by the text layer with dlopen(RTLD_LOCAL | RTLD_DEEPBIND) so that SentencePiece's embedded
// protobuf never meets libtorch's. Exposes the C interface of
// counterpoint/text/sentencepiece_plugin.h; no C++ exception crosses it.
#include "counterpoint/text/sentencepiece_plugin.h"

#include <sentencepiece_processor.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

struct cp_spm_model {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

char* copy_string(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) {
    std::memcpy(out, s.data(), s.size());
    out[s.size()] = '\0';
  }
  return out;
}

void set_error(char** error, const std::string& message) {
  if (error) *error = copy_string(message);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cp_spm_abi_version(void) { return CP_SPM_ABI_VERSION; }

__attribute__((visibility("default"))) cp_spm_model* cp_spm_load(const char* path, char** error) {
  try {
    auto model = std::make_unique<cp_spm_model>();
    auto status = model->processor.Load(path);
    if (!status.ok()) {
      set_error(error, status.ToString());
      return nullptr;
    }
    return model.release();
  } catch (const std::exception& e) {
    set_error(error, e.what());
    return nullptr;
  }
}

__attribute__((visibility("default"))) void cp_spm_free(cp_spm_model* model) { delete model; }

__attribute__((visibility("default"))) int32_t cp_spm_piece_size(const cp_spm_model* model) {
  return model->processor.GetPieceSize();
}

__attribute__((visibility("default"))) int32_t cp_spm_pad_id(const cp_spm_model* model) {
  return model->processor.pad_id();
}

__attribute__((visibility("default"))) int32_t cp_spm_unk_id(const cp_spm_model* model) {
  return model->processor.unk_id();
}

__attribute__((visibility("default"))) int cp_spm_encode(const cp_spm_model* model, const char* text,
                                                         size_t length, cp_spm_encoding* out, char** error) {
  try {
    std::vector<int> ids;
    auto status = model->processor.Encode(std::string_view(text, length), &ids);
    if (!status.ok()) {
      set_error(error, status.ToString());
      return 1;
    }
    out->size = ids.size();
    out->ids = static_cast<int32_t*>(std::calloc(ids.size() + 1, sizeof(int32_t)));
    out->pieces = static_cast<char**>(std::calloc(ids.size() + 1, sizeof(char*)));
    if (!out->ids || !out->pieces) {
      cp_spm_free_encoding(out);
      set_error(error, "out of memory");
      return 1;
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      out->ids[i] = ids[i];
      out->pieces[i] = copy_string(model->processor.IdToPiece(ids[i]));
    }
    return 0;
  } catch (const std::exception& e) {
    set_error(error, e.what());
    return 1;
  }
}

__attribute__((visibility("default"))) void cp_spm_free_encoding(cp_spm_encoding* encoding) {
  if (!encoding) return;
  if (encoding->pieces) {
    for (std::size_t i = 0; i < encoding->size; ++i) std::free(encoding->pieces[i]);
  }
  std::free(encoding->pieces);
  std::free(encoding->ids);
  encoding->pieces = nullptr;
  encoding->ids = nullptr;
  encoding->size = 0;
}

__attribute__((visibility("default"))) void cp_spm_free_string(char* text) { std::free(text); }

}  // extern "C"
