#include "counterpoint/app/index_search.h"

#include <cmath>

#include "counterpoint/app/corpus_index.h"
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
                      "pass the model to search with (--model / --sparse-model)");
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
                          "pass it explicitly (--model / --sparse-model), or search from another directory");
  }
  return dir;
}

}  // namespace

IndexSearchReport search_index(const IndexSearchOptions& options, const std::vector<data::Query>& queries) {
  if (queries.empty()) throw InvalidArgument("no queries to search");
  retrieval::validate_settings(options.search);  // before the index and models load
  if (options.search.scorer == retrieval::Scorer::kVerifier && options.verifier.empty()) {
    throw InvalidArgument("scorer verifier needs --verifier (a directory from `train verifier`)");
  }
  require_models_read_by(options.search.scorer, options.sparse_model.has_value(), !options.verifier.empty());
  auto loaded = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(options.index));
  loaded->check_params(options.search.dense_params);  // before the models load
  const auto& recorded = loaded->options();
  if (options.search.scorer == retrieval::Scorer::kSparsity && recorded.sparse_dim == 0) {
    throw InvalidArgument("a sparsity scorer reads the Es rows an index stores, and " + options.index +
                          " stores none: rebuild it with `index build --sparse-model NAME` (e.g. " +
                          kDefaultSparseModel + ")");
  }
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

  std::vector<std::string> texts;
  for (const auto& q : queries) texts.push_back(q.text);
  auto encoded = retriever->encode_queries(texts, options.search, options.prefix ? &*options.prefix : nullptr);
  IndexSearchReport report;
  if (options.exclude_query_ids) {
    for (const auto& q : queries) {
      encoded.exclude.push_back({q.id});
      if (loaded->slot_of(q.id)) report.excluded_own_ids.push_back(q.id);
    }
  }
  report.hits = retriever->search_encoded(encoded, options.search);
  report.alpha = retriever->alpha_for(options.search);
  report.scale = retriever->scale_for(options.search);
  report.scoring = retrieval::describe_scoring(options.search, report.alpha, report.scale);
  report.stances = std::move(encoded.stances);
  report.retriever = std::move(retriever);
  return report;
}

}  // namespace counterpoint::app
