#include "counterpoint/app/index_search.h"

#include <cmath>

#include "counterpoint/app/corpus_index.h"
#include "counterpoint/app/settings.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/defaults.h"
#include "counterpoint/scoring/map_verifier.h"

namespace counterpoint::app {

std::string recorded_model_name(const std::string& identity) { return identity.substr(0, identity.rfind('@')); }

namespace {

// The model an index records, looked up by name among the installed models (resolve_model) and
// never followed as a path: header.json is input, and loading a model runs its TorchScript, so a
// recorded "../x" or "/tmp/x" is refused before any file of it is opened.
std::string recorded_model(const std::string& identity, const std::string& role, const std::string& index) {
  const std::string name = recorded_model_name(identity);
  const bool plain = !name.empty() && name != "." && name != ".." &&
                     name.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
  if (!plain) {
    throw CorruptFile("index " + index + " records its " + role + " as '" + identity +
                      "', which is not the name of a model (an index names an installed model, never a path); "
                      "pass the model to search with (model / sparse_model)");
  }
  if (name == "external") {
    throw InvalidArgument("index " + index + " was built from embeddings made outside counterpoint (its " + role +
                          " is recorded as 'external'): no model here encodes its queries; search it with query "
                          "vectors in Python (Index.load(path).search(vectors, k)), or rebuild it with the identity "
                          "of the model that made the rows");
  }
  const std::string dir = resolve_model(name);
  // resolve_model takes a folder of the working directory before the installed models; the
  // index's record may only select an installed one.
  if (dir == name) {
    throw InvalidArgument("index " + index + " records its " + role + " as " + name + ", and ./" + name +
                          " in the working directory is a model folder, which an index's record never selects: "
                          "pass it explicitly (model / sparse_model), or search from another directory");
  }
  return dir;
}

}  // namespace

MeasuredComponents measured_components(const retrieval::SearchOptions& options) {
  using retrieval::Scorer;
  MeasuredComponents measured;
  measured.sparsity = options.scorer == Scorer::kSparsity;
  measured.bm25 = options.stage1 != retrieval::Stage1::kDense;
  measured.token = options.scorer != Scorer::kCosine && options.scorer != Scorer::kSparsity;
  return measured;
}

SearchReport search_loaded(const retrieval::Retriever& retriever, SearchQueries queries,
                           const retrieval::SearchOptions& options) {
  using Presence = ScorerInputs::Presence;
  const auto& stored = retriever.index().options();
  ScorerInputs inputs;
  // Rows encoded elsewhere stand for Es(q) where Es itself is absent.
  const bool sparse_rows_given = queries.encoded && queries.encoded->sparse.rows() > 0;
  inputs.sparse_model = retriever.sparse_encoder() || sparse_rows_given ? Presence::kHeld : Presence::kAbsent;
  inputs.verifier = retriever.verifier() ? Presence::kHeld : Presence::kAbsent;
  inputs.index_sparse_rows = stored.sparse_dim > 0;
  inputs.index_token_rows = stored.store_token_embeddings;
  require_scorer_inputs(options, inputs);
  retriever.index().check_params(options.dense_params);  // before any query is encoded
  SearchReport report;
  report.alpha = retriever.alpha_for(options);
  report.scale = retriever.scale_for(options);
  report.scoring = retrieval::describe_scoring(options, report.alpha, report.scale);
  retrieval::EncodedQueries encoded =
      queries.encoded ? std::move(*queries.encoded)
                      : retriever.encode_queries(queries.texts, options, queries.prefix ? &*queries.prefix : nullptr);
  encoded.exclude = std::move(queries.exclude);
  report.hits = retriever.search_encoded(encoded, options);
  report.stances = std::move(encoded.stances);
  return report;
}

IndexSearchReport search_index(const IndexSearchOptions& options, const std::vector<data::Query>& queries) {
  using Presence = ScorerInputs::Presence;
  if (queries.empty()) throw InvalidArgument("no queries to search");
  ScorerInputs given;  // what the user named, checked before the index and models load
  given.sparse_model = options.sparse_model ? Presence::kGiven : Presence::kHeld;
  given.verifier = options.verifier.empty() ? Presence::kAbsent : Presence::kGiven;
  require_scorer_inputs(options.search, given);
  auto loaded = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(options.index));
  loaded->check_params(options.search.dense_params);  // before the models load
  const auto& recorded = loaded->options();
  given.sparse_model = options.sparse_model || !recorded.sparse_encoder_id.empty() ? Presence::kHeld : Presence::kAbsent;
  given.index_sparse_rows = recorded.sparse_dim > 0;
  given.index_token_rows = recorded.store_token_embeddings;
  given.where = "index " + options.index;
  require_scorer_inputs(options.search, given);
  std::string model = options.model.value_or("");
  if (!options.model) {
    model = recorded.encoder_id.empty() ? std::string(kDefaultDenseModel)
                                        : recorded_model(recorded.encoder_id, "encoder", options.index);
  }
  std::string sparse_model = options.sparse_model.value_or("");
  if (!options.sparse_model && !recorded.sparse_encoder_id.empty()) {
    sparse_model = recorded_model(recorded.sparse_encoder_id, "sparse encoder", options.index);
  }
  auto encoder = load_model(model, options.threads);
  std::shared_ptr<Encoder> sparse = sparse_model.empty() ? nullptr : load_model(sparse_model, options.threads);
  auto verifier = options.verifier.empty() ? nullptr : scoring::load_map_verifier(options.verifier);
  auto retriever = std::make_shared<retrieval::Retriever>(loaded, encoder, sparse, verifier);

  SearchQueries batch;
  for (const auto& q : queries) batch.texts.push_back(q.text);
  batch.prefix = options.prefix;
  IndexSearchReport report;
  if (options.exclude_query_ids) {
    for (const auto& q : queries) {
      batch.exclude.push_back({q.id});
      if (loaded->slot_of(q.id)) report.excluded_own_ids.push_back(q.id);
    }
  }
  static_cast<SearchReport&>(report) = search_loaded(*retriever, std::move(batch), options.search);
  report.retriever = std::move(retriever);
  return report;
}

}  // namespace counterpoint::app
