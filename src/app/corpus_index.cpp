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

void validate(const IndexBuild& build, bool has_sparse_encoder) {
  if (build.batch_size == 0) throw InvalidArgument("batch_size must be >= 1 (documents encoded per step)");
  if (build.stem && !build.bm25) {
    throw InvalidArgument("stem applies to BM25 terms, and an index built without BM25 (bm25 false) has none");
  }
  if (build.fp16 && !has_sparse_encoder) {
    throw InvalidArgument("fp16 stores Es rows as float16: it needs a sparse_model (Es)");
  }
}

std::shared_ptr<index::DocumentIndex> build_index(const std::vector<std::string>& texts,
                                                  const std::vector<std::string>& ids, const Encoder& encoder,
                                                  const Encoder* sparse, const IndexBuild& build,
                                                  const ProgressCallback& progress, FeatureCache* features) {
  validate(build, sparse != nullptr);  // texts and ids pair up: add_documents checks it before any encoding
  if (texts.empty()) throw InvalidArgument("texts is empty: an index needs at least one document");
  index::IndexOptions options = retrieval::index_options_for(encoder, sparse, build.tokens);
  options.kind = build.kind;
  options.sparse_storage =
      build.fp16 ? index::IndexOptions::SparseStorage::kFloat16 : index::IndexOptions::SparseStorage::kFloat32;
  options.build_bm25 = build.bm25;
  options.bm25.stem = build.stem;
  auto built = std::make_shared<index::DocumentIndex>(options);
  retrieval::add_documents(*built, texts, ids, encoder, sparse, build.batch_size, progress, features);
  return built;
}

std::shared_ptr<index::DocumentIndex> build_index(const std::vector<data::Document>& corpus, const Encoder& encoder,
                                                  const Encoder* sparse, const IndexBuild& build,
                                                  const ProgressCallback& progress, FeatureCache* features) {
  std::vector<std::string> ids, texts;
  for (const auto& d : corpus) {
    ids.push_back(d.id);
    texts.push_back(data::encoding_text(d));
  }
  return build_index(texts, ids, encoder, sparse, build, progress, features);
}

std::vector<data::Document> passages_of(const index::DocumentIndex& index) {
  std::vector<data::Document> passages;
  index.for_each_live([&](index::Slot s) { passages.push_back({index.id(s), "", index.text(s)}); });
  return passages;
}

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
  std::optional<FeatureCache> features;
  if (!feature_cache.empty()) features.emplace(feature_cache);
  IndexBuild build;
  build.tokens = with_tokens;
  auto built = build_index(corpus, encoder, sparse, build, progress, features ? &*features : nullptr);
  if (!cache.empty()) built->save(cache);
  return built;
}

std::shared_ptr<Encoder> load_model(const std::string& name_or_dir, int threads) {
  EncoderConfig config;
  config.threads = threads;
  return Encoder::load(name_or_dir, config);
}

}  // namespace counterpoint::app
