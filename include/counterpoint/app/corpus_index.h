// counterpoint/app: the workflows a user asks for end to end (index a corpus, run a BEIR
// configuration, evaluate stance, the demo), each one options struct -> one call -> a report.
// The CLI, the Python module and the benchmarks call these; they only parse, call and print.
// corpus_index.h owns "the index of these texts with these encoders": built (build_index), or
// reused from a cache directory (cached_corpus_index).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "counterpoint/core/progress.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/feature_cache.h"
#include "counterpoint/index/document_index.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::app {

// How a new index stores what it holds; every face's default is this default-constructed struct.
struct IndexBuild {
  std::string kind = index::IndexOptions{}.kind;  // "flat", "hnsw", "ivf" or "ivfpq"
  bool fp16 = false;                              // Es stored as float16 (half the memory)
  bool tokens = false;                            // E's token embeddings, read by token scorers
  bool bm25 = index::IndexOptions{}.build_bm25;   // BM25 postings, read by stage1 "bm25" and "hybrid"
  bool stem = index::Bm25Options{}.stem;          // BM25 terms stemmed (Snowball English)
  std::size_t batch_size = retrieval::kDocumentsPerStep;  // documents encoded per step
};

// InvalidArgument, in field names, for batch_size 0, stem without bm25 or fp16 without an Es:
// checked before a model is loaded or a text read (an unknown kind is refused by build_index, before
// any encoding).
void validate(const IndexBuild& build, bool has_sparse_encoder);

// A new index of `texts` (ids `ids`, same length, at least one) encoded with `encoder` and `sparse`
// (when not null), as `build` says. With `features`, pooled features are reused from and kept there.
std::shared_ptr<index::DocumentIndex> build_index(const std::vector<std::string>& texts,
                                                  const std::vector<std::string>& ids, const Encoder& encoder,
                                                  const Encoder* sparse, const IndexBuild& build = {},
                                                  const ProgressCallback& progress = {},
                                                  FeatureCache* features = nullptr);
// The same of a corpus: each document's encoding text (title and text), its id.
std::shared_ptr<index::DocumentIndex> build_index(const std::vector<data::Document>& corpus, const Encoder& encoder,
                                                  const Encoder* sparse, const IndexBuild& build = {},
                                                  const ProgressCallback& progress = {},
                                                  FeatureCache* features = nullptr);

// An index's live passages in slot order, as the documents a cleaned corpus is written from.
std::vector<data::Document> passages_of(const index::DocumentIndex& index);

// The index saved at `cache` when there is one (InvalidArgument when its documents are not the
// corpus's: other ids, another count or another text); otherwise a flat index of `corpus` encoded with
// `encoder` (and `sparse` when not null), saved to `cache` unless `cache` is empty. With a
// `feature_cache` folder, the network's pooled features of the corpus are kept there and reused:
// E and every head Es over the same network then index the corpus without a forward pass.
// `with_tokens` (for token scorers) stores E's token embeddings too; a cached index without them
// is then refused (InvalidArgument) before any encoding.
std::shared_ptr<index::DocumentIndex> cached_corpus_index(const std::string& cache,
                                                          const std::vector<data::Document>& corpus,
                                                          const Encoder& encoder, const Encoder* sparse,
                                                          const ProgressCallback& progress = {},
                                                          const std::string& feature_cache = "",
                                                          bool with_tokens = false);

// A model by name or directory (resolve_model), loaded with `threads` encoder threads.
std::shared_ptr<Encoder> load_model(const std::string& name_or_dir, int threads);

}  // namespace counterpoint::app
