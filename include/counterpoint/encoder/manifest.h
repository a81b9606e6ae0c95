// counterpoint/encoder/manifest.h: the model directory format.
// A model directory holds a TorchScript file, the tokenizer file(s) and manifest.json, which
// names the architecture, widths, pooling, limits, prefixes, licence, provenance and a SHA-256
// for every file. Loading verifies every checksum BEFORE any TorchScript is deserialised:
// TorchScript files can execute code when loaded, so only files the manifest vouches for are.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "counterpoint/text/tokenizer.h"  // SpecialTokens

namespace counterpoint {

enum class Pooling { kModel, kCls, kMean };
Pooling parse_pooling(const std::string& name);
std::string to_string(Pooling pooling);

// The head on the pooled embedding f of a model with a head_file, applied before normalisation.
//   kLinear: W f; the file holds the float32 tensor W [embedding_dim, pooled width].
//   kMlp: W f + W2 gelu(W1 f + b1) + b2, a residual two-layer MLP; the file holds the tensor list
//     {W, W1 [hidden, pooled width], b1 [hidden], W2 [embedding_dim, hidden], b2 [embedding_dim]}.
//     With W2 and b2 zero it is the linear head W, which is where training starts it.
enum class HeadKind { kLinear, kMlp };
HeadKind parse_head_kind(const std::string& name);  // "linear", "mlp"
std::string to_string(HeadKind kind);

struct ModelManifest {
  static constexpr int kFormatVersion = 1;

  std::string name;
  std::string architecture;            // "use-lite", "bert", ...
  std::size_t embedding_dim = 0;       // width of the pooled sentence embedding
  std::size_t token_dim = 0;           // width of the per-token states
  Pooling pooling = Pooling::kModel;   // kModel: the network's own pooled output
  std::size_t max_length = 0;          // tokens, special tokens included
  std::string tokenizer_kind;          // "wordpiece", "use-unigram", "sentencepiece"
  std::string tokenizer_file;          // relative to the model directory
  bool lowercase = true;               // wordpiece only
  // wordpiece only: tokenizer.specials, added_tokens and pair_separators, absent for BERT's
  SpecialTokens specials;
  std::string query_prefix;
  std::string document_prefix;
  bool normalized = true;              // pooled outputs are L2-normalised
  std::string license;
  std::string model_file = "model.pt";
  // Optional head on the pooled embedding, applied before normalisation, written by torch::save
  // in head_kind's layout (SparseCL with a frozen network trains only this). "" = none.
  std::string head_file;
  HeadKind head_kind = HeadKind::kLinear;
  nlohmann::json source;               // package, version, upstream
  nlohmann::json training;             // present for fine-tuned models: base, data, loss, hyperparameters, scores
  std::map<std::string, std::string> files;  // file name -> sha256 hex

  // Parses and validates manifest.json of `dir`, then verifies every listed file's checksum.
  // FileNotFound for a missing directory/manifest/file; CorruptFile for bad JSON, missing or
  // ill-typed fields, an unsupported format version or a checksum mismatch.
  static ModelManifest load(const std::string& dir);
  static ModelManifest parse(const std::string& json_text, const std::string& origin);

  // training.<field> when recorded: a setting a search reads back when the user gives none (alpha,
  // sparsity_scale). CorruptFile naming `origin` (the manifest's path), the model and the field
  // unless it is a finite 32-bit number (and >= 0 for sparsity_scale): 1e308 is a finite double
  // that becomes infinity as a float.
  std::optional<float> recorded_search_setting(const std::string& field, const std::string& origin) const;

  nlohmann::json to_json() const;
  // Recomputes the checksums of `files`' keys in `dir` and writes manifest.json atomically.
  void save(const std::string& dir);
};

}  // namespace counterpoint
