#include "counterpoint/app/corpus_index.h"

#include <optional>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/feature_cache.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::app {

namespace {

// An index cache of another corpus (or of an older version of this one) would score every query
// against the wrong documents and print metrics of 0 without an error.
void require_same_corpus(const index::DocumentIndex& index, const std::vector<data::Document>& corpus,
                         const std::string& cache) {
  const auto refuse = [&](const std::string& why) {
    throw InvalidArgument("the index " + cache + " is an index of another corpus (" + why +
                          "); delete it or choose another folder");
  };
  if (index.size() != corpus.size()) {
    refuse(std::to_string(index.size()) + " documents, the corpus has " + std::to_string(corpus.size()));
  }
  for (const auto& d : corpus) {
    const auto slot = index.slot_of(d.id);
    if (!slot) refuse("it lacks document '" + d.id + "'");
    if (index.text(*slot) != data::encoding_text(d)) refuse("the text of document '" + d.id + "' differs");
  }
}

}  // namespace

std::shared_ptr<index::DocumentIndex> cached_corpus_index(const std::string& cache,
                                                          const std::vector<data::Document>& corpus,
                                                          const Encoder& encoder, const Encoder* sparse,
                                                          const ProgressCallback& progress,
                                                          const std::string& feature_cache, bool with_tokens) {
  if (!cache.empty() && path_exists(cache)) {
    auto loaded = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(cache));
    require_same_corpus(*loaded, corpus, cache);
    if (with_tokens && !loaded->options().store_token_embeddings) {
      throw InvalidArgument("the index " + cache + " holds no token embeddings, which this scorer reads; "
                            "delete it or choose another folder");
    }
    // Before check_encoders' advice to build an index with Es, which speaks of a command the user of
    // a cache never ran: the cache was made by an earlier run whose scorer had no sparsity term.
    if (sparse && loaded->options().sparse_dim == 0) {
      throw InvalidArgument("the index " + cache + " holds no Es rows (an earlier run without a sparsity scorer "
                            "cached it), which this scorer reads; delete it or choose another folder");
    }
    return loaded;
  }
  auto built = std::make_shared<index::DocumentIndex>(retrieval::index_options_for(encoder, sparse, with_tokens));
  std::vector<std::string> ids, texts;
  for (const auto& d : corpus) {
    ids.push_back(d.id);
    texts.push_back(data::encoding_text(d));
  }
  std::optional<FeatureCache> features;
  if (!feature_cache.empty()) features.emplace(feature_cache);
  retrieval::add_documents(*built, texts, ids, encoder, sparse, retrieval::kDocumentsPerStep, progress,
                           features ? &*features : nullptr);
  if (!cache.empty()) built->save(cache);
  return built;
}

std::shared_ptr<Encoder> load_model(const std::string& name_or_dir, int threads) {
  EncoderConfig config;
  config.threads = threads;
  return Encoder::load(name_or_dir, config);
}

}  // namespace counterpoint::app
