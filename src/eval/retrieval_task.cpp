#include "counterpoint/eval/retrieval_task.h"

#include <algorithm>
#include <cstdio>

#include "counterpoint/core/errors.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/encoder/manifest.h"
#include "counterpoint/eval/metrics.h"

namespace counterpoint::eval {

data::RankedRun ranked_run(const std::vector<std::string>& query_ids,
                           const std::vector<std::vector<retrieval::Hit>>& hits) {
  if (query_ids.size() != hits.size()) {
    throw InvalidArgument("ranked_run: " + std::to_string(hits.size()) + " hit lists for " +
                          std::to_string(query_ids.size()) + " query ids");
  }
  data::RankedRun run;
  for (std::size_t i = 0; i < query_ids.size(); ++i) {
    auto& ranking = run[query_ids[i]];
    for (const auto& h : hits[i]) ranking.push_back({h.id, h.score});
  }
  return run;
}

TaskAlphaTuning tune_alpha_on_task(const RetrievalTask& task, const std::shared_ptr<Encoder>& dense,
                                   const std::shared_ptr<Encoder>& sparse, scoring::Sparsity sparsity,
                                   const AlphaSearch& alpha_search, const std::vector<float>& scales) {
  if (scales.empty()) throw InvalidArgument("tune_alpha_on_task: give at least one sparsity scale (0 = none)");
  for (float scale : scales) retrieval::choose_sparsity_scale(scale, nullptr);
  if (task.doc_ids.empty() || task.query_ids.empty()) {
    throw InvalidArgument("tune_alpha_on_task: the task needs documents and queries (got " +
                          std::to_string(task.doc_ids.size()) + " and " + std::to_string(task.query_ids.size()) + ")");
  }
  if (!dense || !sparse) throw InvalidArgument("tune_alpha_on_task: both encoders are required");
  auto documents = std::make_shared<index::DocumentIndex>(retrieval::index_options_for(*dense, sparse.get()));
  retrieval::add_documents(*documents, task.doc_texts, task.doc_ids, *dense, sparse.get());
  retrieval::Retriever retriever(documents, dense, sparse);
  retrieval::SearchOptions search;
  search.scorer = retrieval::Scorer::kSparsity;
  search.sparsity.function = sparsity;
  search.candidates = std::min<std::size_t>(100, task.doc_ids.size());
  search.k = std::min<std::size_t>(10, search.candidates);  // nDCG@10; a smaller task ranks all it has
  const auto encoded = retriever.encode_queries(task.query_texts, search);
  const auto candidates = retriever.find_candidates(encoded, search);  // the same at every alpha and scale
  float scale = 0.0f;
  const auto ndcg = [&](double alpha) {
    auto options = search;
    if (alpha == 0.0) {
      options.scorer = retrieval::Scorer::kCosine;  // the reference: no sparsity term to weigh
    } else {
      options.alpha = float(alpha);
      options.sparsity.scale = scale;
    }
    return evaluate(ranked_run(task.query_ids, retriever.rescore(encoded, candidates, options)), task.qrels, {"ndcg@10"})
        .mean.at("ndcg@10");
  };
  TaskAlphaTuning tuning;
  tuning.queries = task.query_ids.size();
  tuning.documents = task.doc_ids.size();
  tuning.candidates = search.candidates;
  tuning.cosine_ndcg = ndcg(0.0);
  for (float s : scales) {
    scale = s;
    AlphaResult at_scale = tune_alpha(ndcg, alpha_search);
    tuning.scale_curve.push_back({s, at_scale.best_score});
    if (tuning.scale_curve.size() == 1 || at_scale.best_score > tuning.tuned.best_score) {
      tuning.tuned = std::move(at_scale);
      tuning.scale = s;
    }
  }
  return tuning;
}

void record_tuned_alpha(const std::string& model_dir, const TaskAlphaTuning& tuning, const AlphaSearch& search,
                        nlohmann::json dev) {
  char description[200];
  std::snprintf(description, sizeof description, "%s search [%g, %g], %d bins, to width %g (REFERENCE.md)",
                search.kind == AlphaSearch::Kind::kReference ? "left edge of the interval"
                : search.kind == AlphaSearch::Kind::kGrid    ? "best point of the grid"
                                                             : "best point of the interval",
                search.lo, search.hi, search.bins, search.min_width);
  ModelManifest manifest = ModelManifest::load(model_dir);
  manifest.training["alpha"] = tuning.tuned.best_alpha;
  manifest.training["alpha_search"] = description;
  manifest.training["alpha_reference_left_edge"] = tuning.tuned.reference_alpha;
  dev["ndcg@10_cosine"] = tuning.cosine_ndcg;
  dev["ndcg@10_cosine_plus_sparsity"] = tuning.tuned.best_score;
  if (tuning.scale_curve.size() > 1) {
    manifest.training["sparsity_scale"] = tuning.scale;
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : tuning.scale_curve) curve.push_back({{"scale", p.scale}, {"ndcg@10", p.score}});
    dev["sparsity_scale_curve"] = std::move(curve);
  } else {
    manifest.training.erase("sparsity_scale");  // alpha was tuned without a gate
  }
  manifest.training["dev"] = std::move(dev);
  manifest.save(model_dir);
}

}  // namespace counterpoint::eval
