// counterpoint/encoder/feature_cache.h: pooled features of texts kept on disk, so that a corpus
// is run through a network once. Features are the network's pooled vectors before any head and
// normalisation (Encoder::pooled_features); rows of E and of every head Es over the same network
// are derived from them by a matrix product (Encoder::rows_from_features). A record is keyed by
// the encoder's feature_key (network and tokenizer checksums, lower-casing, pooling, max length,
// prefix) and the SHA-256 of the text, so nothing that changes an embedding can hit a stale row.
// Every record carries a checksum, verified before its features are used: a record that fails it
// (a changed byte, a write cut short by a crash, records misaligned after a cut one) and a file of
// the earlier format without checksums are computed again, and the file is rewritten without
// them (said on stderr). A file that is not a feature cache, or one of a newer format, is refused
// (CorruptFile naming it) rather than replaced.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "counterpoint/core/matrix.h"
#include "counterpoint/encoder/encoder.h"

namespace counterpoint {

// $COUNTERPOINT_CACHE, else $XDG_CACHE_HOME/counterpoint, else $HOME/.cache/counterpoint.
std::string default_cache_directory();

class FeatureCache {
 public:
  // Records live in <directory>/features/<feature key>.v2.bin (created on first write; format 1's
  // "<feature key>.bin" files are left to the versions that read them).
  explicit FeatureCache(std::string directory = default_cache_directory());

  // Rows of `texts` as encoder.encode(texts, options) gives them: features found in the cache are
  // reused, the others computed (one forward pass per batch of missing texts) and appended (a
  // folder that cannot be written is reported once on stderr, and the rows are returned all the
  // same). options.progress sees the texts computed. A cached row keeps the rounding of the batch
  // that first computed it (a text's vector moves by about 1e-7 from one batch to another), so
  // results trained from a cache are reproducible bit for bit only from the same cache contents.
  Matrix encode(const Encoder& encoder, const std::vector<std::string>& texts, const EncodeOptions& options = {});
  // E and Es rows as Encoder::encode_both gives them; one set of features when the two share
  // their network, else each encoder's own.
  std::pair<Matrix, Matrix> encode_both(const Encoder& dense, const Encoder& sparse,
                                        const std::vector<std::string>& texts, const EncodeOptions& options = {});

  // The features of `texts` under `encoder` (computed and kept where missing).
  Matrix features(const Encoder& encoder, const std::vector<std::string>& texts, const EncodeOptions& options = {});

  const std::string& directory() const { return directory_; }
  // Texts found / computed since construction.
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  std::string directory_;
  std::size_t hits_ = 0, misses_ = 0;
  bool warned_ = false;  // a failed write is reported once
};

}  // namespace counterpoint
