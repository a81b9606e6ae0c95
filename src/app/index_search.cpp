#include "counterpoint/app/index_search.h"

#include <cmath>

#include "counterpoint/app/corpus_index.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/defaults.h"
#include "counterpoint/scoring/map_verifier.h"

namespace counterpoint::app {

std::string recorded_model_name(const std::string& identity) { return identity.substr(0, identity.rfind('@')); }

IndexSearchReport search_index(const IndexSearchOptions& options, const std::vector<data::Query>& queries) {
  if (queries.empty()) throw InvalidArgument("no queries to search");
  if (options.search.alpha && !std::isfinite(*options.search.alpha)) throw InvalidArgument("--alpha must be finite");
  retrieval::choose_sparsity_scale(options.search.sparsity.scale, nullptr);  // a given scale's range
  if (options.search.scorer == retrieval::Scorer::kVerifier && options.verifier.empty()) {
    throw InvalidArgument("scorer verifier needs --verifier (a directory from `train verifier`)");
  }
  auto loaded = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(options.index));
  const auto& recorded = loaded->options();
  std::string model = options.model.value_or("");
  if (!options.model) {
    model = recorded.encoder_id.empty() ? std::string(kDefaultDenseModel) : recorded_model_name(recorded.encoder_id);
  }
  std::string sparse_model = options.sparse_model.value_or("");
  if (!options.sparse_model && !recorded.sparse_encoder_id.empty()) {
    sparse_model = recorded_model_name(recorded.sparse_encoder_id);
  }
  auto encoder = load_model(model, options.threads);
  std::shared_ptr<Encoder> sparse = sparse_model.empty() ? nullptr : load_model(sparse_model, options.threads);
  auto verifier = options.verifier.empty() ? nullptr : scoring::load_map_verifier(options.verifier);
  auto retriever = std::make_shared<retrieval::Retriever>(loaded, encoder, sparse, verifier);

  std::vector<std::string> texts;
  for (const auto& q : queries) texts.push_back(q.text);
  auto encoded = retriever->encode_queries(texts, options.search, options.prefix ? &*options.prefix : nullptr);
  if (options.exclude_query_ids) {
    for (const auto& q : queries) encoded.exclude.push_back({q.id});
  }
  IndexSearchReport report;
  report.hits = retriever->search_encoded(encoded, options.search);
  report.alpha = retriever->alpha_for(options.search);
  report.scale = retriever->scale_for(options.search);
  report.scoring = retrieval::describe_scoring(options.search, report.alpha, report.scale);
  report.retriever = std::move(retriever);
  return report;
}

}  // namespace counterpoint::app
