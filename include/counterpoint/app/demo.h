// counterpoint/app/demo.h: contradiction retrieval on a small BEIR-layout corpus (the bundled
// example by default), each query ranked by cosine alone and by cos + alpha * Hoyer with the
// default encoders, with the first contradiction hit explained. `counterpoint demo` prints it.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/data/beir.h"
#include "counterpoint/encoder/defaults.h"
#include "counterpoint/index/document_index.h"
#include "counterpoint/retrieval/explain.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::app {

struct DemoOptions {
  std::string corpus;  // BEIR-layout directory
  std::string qrels;   // contradictions ("" = <corpus>/qrels/contradictions.tsv when present)
  std::string models;  // a directory of installed models searched first for the names ("" = discovery)
  std::string model = kDefaultDenseModel;
  std::string sparse_model = kDefaultSparseModel;
  std::optional<float> alpha;           // unset: the alpha Es records
  std::optional<float> sparsity_scale;  // magnitude gate tau; unset: the tau Es records, else none
  std::size_t k = 3;                    // hits shown per ranking
  int threads = 0;
};

struct DemoQuery {
  data::Query query;
  std::vector<retrieval::Hit> by_cosine, by_contradiction;
  std::optional<retrieval::Explanation> why_first;  // of by_contradiction's first hit
};

struct DemoReport {
  std::string encoder, sparse_encoder;  // E's and Es's names
  retrieval::AlphaChoice alpha;
  retrieval::ScaleChoice scale;
  std::size_t passages = 0;
  std::vector<DemoQuery> queries;
  data::Qrels qrels;  // empty without judgements
  std::shared_ptr<const index::DocumentIndex> index;  // for the hits' texts
  // Queries whose first hit is a judged contradiction, per ranking.
  std::size_t first_by_cosine = 0, first_by_contradiction = 0;
  bool is_contradiction(const std::string& query_id, const std::string& document_id) const;
};

DemoReport run_demo(const DemoOptions& options);

}  // namespace counterpoint::app
