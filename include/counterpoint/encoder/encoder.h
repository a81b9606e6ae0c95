// counterpoint/encoder: text in, embeddings out.
// An Encoder owns one model directory (manifest + tokenizer + TorchScript network) and turns
// batches of texts into pooled sentence embeddings (rows of a Matrix) or per-token states.
// Inputs are sorted by length and padded per batch (length bucketing), then restored to the
// caller's order. This header is free of libtorch so applications compile quickly against it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "counterpoint/core/matrix.h"
#include "counterpoint/core/progress.h"
#include "counterpoint/encoder/manifest.h"
#include "counterpoint/encoder/model_discovery.h"  // resolve_model: names to model directories
#include "counterpoint/text/tokenizer.h"

namespace counterpoint {

class TorchTextModel;

// Which prefix the manifest prepends before tokenising.
enum class TextRole { kDocument, kQuery, kNone };

struct EncoderConfig {
  // Intra-op threads for libtorch (it defaults to 1 on some machines); 0 = all hardware threads.
  int threads = 0;
  // Loads model-int8.pt (dynamically quantised linear layers) instead of the float model,
  // when the model directory provides it.
  bool int8 = false;
};

struct EncodeOptions {
  // Texts per batch, as in sentence-transformers' encode(batch_size=...).
  std::size_t batch_size = 32;
  // Padded tokens (texts x the batch's longest) one forward pass holds at most; a batch of long
  // texts runs as several passes, each padded to its own longest. Rows are the same either way.
  // Why a cap: attention keeps texts x heads x length^2 floats per layer; at 32 x 256 tokens that
  // is 100 MB a layer, allocated and page-faulted afresh on every pass and far out of cache.
  // all-minilm-l6-v2 on ArguAna's arguments (256 tokens, 2 threads): 12-14.5 texts/s in passes
  // of 32, 16-20 in passes of 4-8 (benchmarks/README.md). 0 = no cap.
  std::size_t max_batch_tokens = 2048;
  TextRole role = TextRole::kDocument;
  // When set, replaces the manifest's prefix for this call (e.g. a stance instruction).
  const std::string* prefix_override = nullptr;
  ProgressCallback progress;  // (texts done, texts total)
  // L2-normalise pooled rows (indexes and every scorer expect unit rows); false gives the pooled
  // vectors (after the head) as they are, for callers that want sentence-transformers'
  // normalize_embeddings=False.
  bool normalize = true;
};

// The prefix a text encoded with `options` is given: the override when set, else the manifest's
// prefix for the role (none for TextRole::kNone).
const std::string& prefix_for(const ModelManifest& manifest, const EncodeOptions& options);

struct EncodeReport {
  std::size_t texts = 0;
  std::size_t truncated = 0;  // inputs longer than the model's max_length, cut to it
  std::size_t tokens = 0;     // tokens fed to the network, padding excluded
};

// Checks the identity given for rows computed outside the library (an index built from
// embeddings): "external" (or "external@<tag>") for rows of a model the library does not know,
// else a model name or Encoder::identity() ("name@version") whose model resolves (resolve_model)
// and whose embeddings are `width` wide. InvalidArgument naming `what` (e.g. "encoder_id")
// otherwise, with the installed models and the nearest name.
void require_embedding_source(const std::string& identity, std::size_t width, const std::string& what);
class Encoder;
// The same for rows made by `encoder` itself (a model in hand needs no resolving): its width.
void require_embedding_source(const Encoder& encoder, std::size_t width, const std::string& what);

class Encoder {
 public:
  // The model of a directory or an installed model's name (resolve_model, as the CLI and Python
  // take it): verifies the manifest's checksums, then loads tokenizer and network.
  static std::shared_ptr<Encoder> load(const std::string& name_or_dir, const EncoderConfig& config = {});
  ~Encoder();

  // (texts.size() x embedding_dim) float32, L2-normalised rows (unless options.normalize is false).
  // An empty list gives a 0-row matrix.
  Matrix encode(const std::vector<std::string>& texts, const EncodeOptions& options = {},
                EncodeReport* report = nullptr) const;
  // One (tokens_i x token_dim) matrix per text, L2-normalised rows, padding removed.
  std::vector<Matrix> encode_tokens(const std::vector<std::string>& texts,
                                    const EncodeOptions& options = {},
                                    EncodeReport* report = nullptr) const;

  // True when `other` feeds the same input through the same network: the same loaded network
  // file (by SHA-256), tokenizer file, lower-casing, special tokens, pooling, max_length and prefixes. Either may
  // add its own head (a SparseCL head Es over E's network, as sparse-default over
  // all-minilm-l6-v2). A network changed in place by training no longer matches its checksum, so
  // do not pass an encoder while it is being trained.
  bool shares_network_with(const Encoder& other) const;

  // E and Es of the same texts, rows as dense.encode and sparse.encode give them: one forward pass
  // per batch when the two share their network (shares_network_with), each head applied to the
  // same pooled features; otherwise the two encoders' own passes.
  static std::pair<Matrix, Matrix> encode_both(const Encoder& dense, const Encoder& sparse,
                                               const std::vector<std::string>& texts,
                                               const EncodeOptions& options = {});

  // The network's pooled vectors before any head and normalisation (pooled_width() wide), what a
  // FeatureCache keeps; rows_from_features turns them into the rows encode() gives (the head, if
  // any, then normalisation when `normalize`). Two encoders that share their network
  // (shares_network_with) have the same features, so one cache serves E and every head over it.
  Matrix pooled_features(const std::vector<std::string>& texts, const EncodeOptions& options = {}) const;
  Matrix rows_from_features(MatrixView features, bool normalize = true) const;
  std::size_t pooled_width() const;
  // Names everything that changes pooled features under `options`: the network and tokenizer
  // files (SHA-256), tokenizer kind, lower-casing, special tokens (unless BERT's), pooling, max
  // length and the prefix the role or override gives. Hex SHA-256, equal for encoders that share
  // their network.
  std::string feature_key(const EncodeOptions& options = {}) const;

  // The tokenizer's output for `text` alone (special tokens included, no prefix), cut to
  // max_length ids; 0 = no limit. What the network sees is this cut to the manifest's max_length.
  Encoding tokenize(std::string_view text, std::size_t max_length = 0) const;

  const ModelManifest& manifest() const { return manifest_; }
  const std::string& directory() const { return directory_; }
  std::size_t dim() const { return manifest_.embedding_dim; }
  std::size_t token_dim() const { return manifest_.token_dim; }
  // "<manifest name>@<first 12 hex digits of the loaded weights file's SHA-256>", plus "+<12 of
  // the head's>" for a model with a head, plus "#<12 hex digits of the SHA-256 of settings()>":
  // names the exact network and every manifest setting that changes its embeddings, so rows of
  // another model, or of this one read another way (pooling, lower-casing, max_length, prefixes,
  // the int8 weights), are caught.
  std::string identity() const;
  // What of the model changes its embeddings, as JSON text (an object, keys sorted): the weights
  // file loaded (model.pt, or model-int8.pt with EncoderConfig::int8), the head and tokenizer
  // files with their checksums, the tokenizer kind, lowercase, pooling, max_length, the prefixes
  // and normalized, and the tokenizer's specials unless they are BERT's (left out so that every
  // identity recorded before models named them still holds). Indexes record it beside
  // identity(), so a mismatch can name the field.
  std::string settings() const;
  // "" when rows recorded as made by `recorded_identity` are this encoder's: its identity(), or
  // an identity recorded before the settings were part of it ("name@weights[+head]", no '#')
  // that this model's files still match, so nobody re-encodes a corpus for nothing. Otherwise
  // why not, in the user's terms, e.g. "<owner> was built with pooling mean; model X pools cls",
  // the fields read from `recorded_settings` (settings() of the model that made the rows; "" when
  // not recorded).
  std::string identity_mismatch(const std::string& recorded_identity, const std::string& recorded_settings,
                                const std::string& owner = "the index") const;
  // The network and tokenizer, for training and for callers that need tensors.
  TorchTextModel& model() const { return *model_; }

 private:
  Encoder(std::string dir, ModelManifest manifest, std::unique_ptr<TorchTextModel> model);
  std::string directory_;
  ModelManifest manifest_;
  std::unique_ptr<TorchTextModel> model_;
};

}  // namespace counterpoint
