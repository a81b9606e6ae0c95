// counterpoint/app/beir_run.h: one retrieval configuration run on a BEIR dataset against an
// explicit qrels file (only its queries are run), optionally tuning alpha on those qrels first,
// then scored as trec_eval scores it. `counterpoint run` and the benchmark tables call this.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/core/progress.h"
#include "counterpoint/encoder/feature_cache.h"
#include "counterpoint/encoder/defaults.h"
#include "counterpoint/eval/alpha_search.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::app {

// Stage-1 candidates per query in evaluation runs: deep enough for recall@100 and alpha tuning.
// Left at this default, they follow a run that keeps more hits (-k, or metrics such as recall@2000).
inline constexpr std::size_t kEvaluationCandidates = 1000;

struct BeirRunOptions {
  std::string dataset;      // BEIR directory
  std::string qrels;        // judgements; only their queries are run
  std::string out;          // TREC run file to write ("" = none)
  std::string index_cache;  // index directory to reuse, or to create when absent ("" = none)
  std::vector<std::string> metrics{"ndcg@10", "recall@100", "mrr@10", "acc@1"};
  std::optional<eval::AlphaSearch::Kind> tune_alpha;  // tune on `qrels` first (sparsity scorers)
  bool keep_self = false;   // keep a query's own id in its results (BEIR removes it)
  std::string model = kDefaultDenseModel;
  std::string sparse_model;  // Es, needed by sparsity scorers
  std::string verifier;      // map verifier for the verifier scorer
  std::optional<std::string> prefix;  // query prefix overriding the model's
  int threads = 0;
  // Folder of the pooled-feature cache shared by every run ("" = none): a corpus goes through a
  // network once, and E and every head Es over it reuse the features.
  std::string feature_cache = default_cache_directory();
  // Hits per query: unset = the deepest cut-off the metrics need; set below it is an error. A
  // query's own id, dropped by BEIR's convention, is not one of them (-k 10 serves ndcg@10).
  std::optional<std::size_t> k;
  retrieval::SearchOptions search = [] {
    retrieval::SearchOptions o;
    o.candidates = kEvaluationCandidates;
    return o;
  }();
};

struct BeirRunReport {
  std::size_t queries = 0;
  std::size_t k = 0;                      // hits per query of the scored run
  retrieval::AlphaChoice alpha;           // the alpha of the scored run (sparsity scorers)
  retrieval::ScaleChoice scale;           // its sparsity scale (tau), 0 = none
  std::string scoring;                    // "scorer sparsity (hoyer), alpha 1.5 (tuned by ...)"
  std::optional<eval::AlphaResult> tuning;  // the alpha search, when tuned
  std::map<std::string, double> metrics;  // mean over the judged queries
};

// The stage-1 candidates of an evaluation run that keeps k hits per query: stage 1 must fetch them
// all, or the metrics would score the ranks it never fetched as misses. Candidates left at
// kEvaluationCandidates follow a deeper k, as in every search (retrieval::default_candidates); a
// count set below k is refused (InvalidArgument naming `hits`, what reads the k hits).
std::size_t candidates_for(std::size_t candidates, std::size_t k,
                           const std::string& hits = "hits per query this run keeps");

// Everything checkable without loading a model or reading the corpus: files exist, metric names
// parse, the scorer has what it needs (Es, a verifier), tuning has a sparsity scorer, -k covers
// the metrics' depth where it can be known, candidates >= k, the output's folder exists.
// InvalidArgument / FileNotFound naming the option.
void validate(const BeirRunOptions& options);

// validate(), then the run. `progress` sees the corpus encoding.
BeirRunReport run_beir(const BeirRunOptions& options, const ProgressCallback& progress = {});

}  // namespace counterpoint::app
