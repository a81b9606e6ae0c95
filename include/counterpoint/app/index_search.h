// counterpoint/app/index_search.h: searching a saved index with query texts, the encoders taken
// from the index's own records unless named. `counterpoint search` calls this.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/data/beir.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::app {

struct IndexSearchOptions {
  std::string index;                        // index directory
  std::optional<std::string> model;         // E; unset: the model the index records
  std::optional<std::string> sparse_model;  // Es; unset: the one the index records, if any
  std::string verifier;                     // map verifier for the verifier scorer
  std::optional<std::string> prefix;        // query prefix overriding the model's
  bool exclude_query_ids = false;           // a query never retrieves its own id
  int threads = 0;
  retrieval::SearchOptions search;
};

// What one search returned, as every face reports it.
struct SearchReport {
  std::vector<std::vector<retrieval::Hit>> hits;  // per query, best first
  retrieval::AlphaChoice alpha;
  retrieval::ScaleChoice scale;
  std::string scoring;                            // retrieval::describe_scoring
  std::vector<retrieval::StanceReading> stances;  // per query: the stance stage 2 signed the sparsity term by
};

// The queries of one search: texts (encoded here, with `prefix` overriding the model's query
// prefix) or rows encoded elsewhere (query vectors), and per query the ids never returned.
struct SearchQueries {
  std::vector<std::string> texts;
  std::optional<std::string> prefix;
  std::optional<retrieval::EncodedQueries> encoded;  // set: search these rows; `texts` and `prefix` unused
  std::vector<std::vector<std::string>> exclude;     // empty, or one list per query
};

// The one search of loaded parts, behind the CLI's `search`, Python's Index.search and
// search_index: the settings checked against what the retriever holds (require_scorer_inputs,
// the index's per-call parameters), the queries encoded (unless given as rows), stage 1, stage 2,
// and the alpha and gate it used. Interruptible (core/interrupt.h) before each encoder pass.
SearchReport search_loaded(const retrieval::Retriever& retriever, SearchQueries queries,
                           const retrieval::SearchOptions& options);

// The score components of a Hit a search with `options` measures, beside the score and the cosine:
// the others stay 0 because nothing measured them, so a face shows only these.
struct MeasuredComponents {
  bool sparsity = false;  // a sparsity scorer
  bool bm25 = false;      // BM25 took part in stage 1 (bm25, hybrid)
  bool token = false;     // a token-map scorer or a verifier
};
MeasuredComponents measured_components(const retrieval::SearchOptions& options);

struct IndexSearchReport : SearchReport {
  std::shared_ptr<const retrieval::Retriever> retriever;  // for texts and explanations
  // With exclude_query_ids: the queries whose id is also a corpus id, that passage left out of
  // their hits (BEIR's convention, right for ArguAna; a surprise when two files merely number
  // their rows alike, so every face says so).
  std::vector<std::string> excluded_own_ids;
};

// The installed model name an index's recorded identity ("name@checksum") refers to.
std::string recorded_model_name(const std::string& identity);

// Loads the index and its encoders (checked against its records), then searches (search_loaded).
IndexSearchReport search_index(const IndexSearchOptions& options, const std::vector<data::Query>& queries);

}  // namespace counterpoint::app
