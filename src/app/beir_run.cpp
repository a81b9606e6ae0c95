#include "counterpoint/app/beir_run.h"

#include <cmath>
#include <optional>

#include "counterpoint/app/corpus_index.h"
#include "counterpoint/app/settings.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/run.h"
#include "counterpoint/eval/metrics.h"
#include "counterpoint/eval/retrieval_task.h"
#include "counterpoint/scoring/map_verifier.h"

namespace counterpoint::app {

namespace {

void require_file(const std::string& path, const std::string& what) {
  if (path.empty()) throw InvalidArgument(what + " is required");
  if (!path_exists(path)) throw FileNotFound(what + " not found: " + path);
}

std::vector<data::Query> judged_queries(const data::BeirDataset& dataset, const data::Qrels& qrels,
                                        const BeirRunOptions& options) {
  std::vector<data::Query> queries;
  for (const auto& q : dataset.queries) {
    if (qrels.count(q.id)) queries.push_back(q);
  }
  if (queries.empty()) {
    throw InvalidArgument("no query of " + options.dataset + " has judgements in " + options.qrels);
  }
  return queries;
}

}  // namespace

std::size_t candidates_for(std::size_t candidates, std::size_t k, const std::string& hits) {
  if (candidates == kEvaluationCandidates) return retrieval::default_candidates(k, candidates);
  if (candidates < k) {
    throw InvalidArgument("candidates " + std::to_string(candidates) + " is below the " + std::to_string(k) + " " +
                          hits + "; raise candidates to " + std::to_string(k) + " or more");
  }
  return candidates;
}

void validate(const BeirRunOptions& options) {
  if (options.dataset.empty()) throw InvalidArgument("dataset is required");
  data::require_beir_folder(options.dataset);
  require_file(options.qrels, "qrels");
  if (options.metrics.empty()) throw InvalidArgument("metrics: give at least one metric, e.g. ndcg@10");
  for (const auto& m : options.metrics) eval::parse_metric(m);
  const auto& search = options.search;
  retrieval::validate_settings(search);
  using Presence = ScorerInputs::Presence;
  ScorerInputs inputs;
  inputs.sparse_model = options.sparse_model.empty() ? Presence::kAbsent : Presence::kGiven;
  inputs.verifier = options.verifier.empty() ? Presence::kAbsent : Presence::kGiven;
  require_scorer_inputs(search, inputs);
  if (options.tune_alpha && search.scorer != retrieval::Scorer::kSparsity) {
    throw InvalidArgument("tune_alpha needs a sparsity scorer (hoyer, l2l1 or kappa4)");
  }
  if (options.tune_alpha && search.alpha) {
    throw InvalidArgument("tune_alpha chooses alpha on the qrels, and alpha gives one: keep one of them");
  }
  // run builds a flat index unless index_cache already holds one (`index build --kind ...`): the
  // parameters of the approximate kinds can only apply to such a cache, checked once it loads.
  const index::SearchParams& dense = search.dense_params;
  if ((dense.ef_search > 0 || dense.nprobe > 0) &&
      (options.index_cache.empty() || !path_exists(join_path(options.index_cache, "header.json")))) {
    throw InvalidArgument(std::string(dense.ef_search > 0 ? "ef_search" : "nprobe") +
                          " applies to an hnsw or ivf index, and run builds a flat one: give index_cache an index "
                          "built by `index build --kind hnsw|ivf` from this corpus");
  }
  if (options.k && *options.k == 0) throw InvalidArgument("k must be >= 1");
  if (options.k) candidates_for(search.candidates, *options.k);
  if (!options.out.empty()) {
    require_safe_output(options.out, "out",
                        {{"dataset", options.dataset}, {"qrels", options.qrels}, {"index_cache", options.index_cache},
                         {"model", options.model}, {"sparse_model", options.sparse_model},
                         {"verifier", options.verifier}});
  }
  // Names resolve without loading anything: a typo fails here, not after the corpus is read.
  resolve_model(options.model);
  if (!options.sparse_model.empty()) resolve_model(options.sparse_model);
  if (!options.verifier.empty() && !path_exists(options.verifier)) {
    throw FileNotFound("verifier not found: " + options.verifier);
  }
}

BeirRunReport run_beir(const BeirRunOptions& options, const ProgressCallback& progress) {
  validate(options);
  const auto dataset = data::load_beir(options.dataset);
  const auto qrels = data::load_qrels(options.qrels);
  const auto queries = judged_queries(dataset, qrels, options);

  eval::EvalOptions eval_options;
  eval_options.exclude_self = !options.keep_self;
  // Every metric must see its whole cut-off: a run shallower than recall@100 would score the
  // missing ranks as misses and print a wrong figure. The retriever drops a query's own id before
  // it keeps k hits (it fetches the extra candidate itself), so no rank of the run is lost to it.
  retrieval::SearchOptions search = options.search;
  const std::size_t depth = eval::required_depth(options.metrics, qrels, eval::EvalOptions{false});
  if (!options.k) {
    search.k = std::max(search.k, depth);
  } else if (*options.k < depth) {
    std::string names;
    for (const auto& m : options.metrics) names += (names.empty() ? "" : ",") + m;
    throw InvalidArgument("k " + std::to_string(*options.k) + " is below the " + std::to_string(depth) +
                          " hits per query that metrics " + names + " need; raise k or drop the deeper metrics");
  } else {
    search.k = *options.k;
  }
  search.candidates = candidates_for(search.candidates, search.k);

  BeirRunReport report;
  auto encoder = load_model(options.model, options.threads);
  std::shared_ptr<Encoder> sparse =
      options.sparse_model.empty() ? nullptr : load_model(options.sparse_model, options.threads);
  auto verifier = options.verifier.empty() ? nullptr : scoring::load_map_verifier(options.verifier);
  auto idx = cached_corpus_index(options.index_cache, dataset.corpus, *encoder, sparse.get(), progress,
                                 options.feature_cache, retrieval::uses_tokens(options.search.scorer));
  idx->check_params(search.dense_params);  // a cached index of another kind, before the queries encode
  retrieval::Retriever retriever(idx, encoder, sparse, verifier);

  std::vector<std::string> texts, ids;
  for (const auto& q : queries) {
    texts.push_back(q.text);
    ids.push_back(q.id);
  }
  std::optional<FeatureCache> features;
  if (!options.feature_cache.empty()) features.emplace(options.feature_cache);
  auto encoded = retriever.encode_queries(texts, search, options.prefix ? &*options.prefix : nullptr,
                                          features ? &*features : nullptr);
  if (!options.keep_self) {
    for (const auto& q : queries) encoded.exclude.push_back({q.id});
  }
  report.alpha = retriever.alpha_for(search);
  report.scale = retriever.scale_for(search);
  // Stage 1 does not depend on alpha: its candidates are found once and rescored at every alpha.
  const auto candidates = retriever.find_candidates(encoded, search);
  if (options.tune_alpha) {
    eval::AlphaSearch alpha_search;
    alpha_search.kind = *options.tune_alpha;
    report.tuning = eval::tune_alpha(
        [&](double a) {
          auto o = search;
          o.alpha = float(a);
          return eval::evaluate(eval::ranked_run(ids, retriever.rescore(encoded, candidates, o)), qrels, {"ndcg@10"},
                                eval_options)
              .mean.at("ndcg@10");
        },
        alpha_search);
    search.alpha = float(report.tuning->best_alpha);
    report.alpha.value = *search.alpha;
    report.alpha.source = retrieval::AlphaChoice::Source::kTuned;
    report.alpha.tuned_by = "the " + eval::to_string(alpha_search.kind) + " search on " + options.qrels;
  }
  const auto run = eval::ranked_run(ids, retriever.rescore(encoded, candidates, search));
  if (!options.out.empty()) data::write_trec_run(options.out, run);
  report.queries = queries.size();
  report.k = search.k;
  report.scoring = retrieval::describe_scoring(search, report.alpha, report.scale);
  report.metrics = eval::evaluate(run, qrels, options.metrics, eval_options).mean;
  return report;
}

}  // namespace counterpoint::app
