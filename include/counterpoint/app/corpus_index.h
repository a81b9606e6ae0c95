// counterpoint/app: the workflows a user asks for end to end (index a corpus, run a BEIR
// configuration, evaluate stance, the demo), each one options struct -> one call -> a report.
// The CLI, the Python module and the benchmarks call these; they only parse, call and print.
// corpus_index.h owns "the index of this corpus with these encoders": built, or reused from a
// cache directory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "counterpoint/core/progress.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/index/document_index.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::app {

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
