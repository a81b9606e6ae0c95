// counterpoint/text/sentencepiece_plugin.h: the C interface between the text layer and the
// SentencePiece plugin (src/plugins/sentencepiece_plugin.cpp). Plain C types only, so nothing
// of SentencePiece or its protobuf crosses the dlopen boundary. Strings and arrays returned by
// the plugin are owned by it and released with the matching free function.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CP_SPM_ABI_VERSION 1

typedef struct cp_spm_model cp_spm_model;

typedef struct cp_spm_encoding {
  int32_t* ids;
  char** pieces;  // NUL-terminated UTF-8, one per id
  size_t size;
} cp_spm_encoding;

int cp_spm_abi_version(void);
// The loaded model, or NULL with *error set to a message (release with cp_spm_free_string).
cp_spm_model* cp_spm_load(const char* path, char** error);
void cp_spm_free(cp_spm_model* model);
int32_t cp_spm_piece_size(const cp_spm_model* model);
int32_t cp_spm_pad_id(const cp_spm_model* model);  // -1 when the model has none
int32_t cp_spm_unk_id(const cp_spm_model* model);
// 0 on success (release *out with cp_spm_free_encoding); otherwise nonzero and *error set.
int cp_spm_encode(const cp_spm_model* model, const char* text, size_t length, cp_spm_encoding* out,
                  char** error);
void cp_spm_free_encoding(cp_spm_encoding* encoding);
void cp_spm_free_string(char* text);

#ifdef __cplusplus
}
#endif
