// counterpoint/eval/retrieval_task.h: evaluating the retriever on a task held in memory
// (documents, queries, qrels), and tuning the alpha of cos(E) + alpha * sparsity(Es) on it: the
// pipeline `counterpoint train --dev-triples` runs after training (training::dev_task builds
// the task from held-out triples). The hits of a search become a run here, the one conversion
// the CLI and the benchmarks use.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "counterpoint/data/beir.h"
#include "counterpoint/data/run.h"
#include "counterpoint/eval/alpha_search.h"
#include "counterpoint/retrieval/retriever.h"
#include "counterpoint/scoring/sparsity.h"

namespace counterpoint {
class Encoder;
}

namespace counterpoint::eval {

struct RetrievalTask {
  std::vector<std::string> doc_ids, doc_texts;      // the corpus, one text per id
  std::vector<std::string> query_ids, query_texts;  // the queries, one text per id
  data::Qrels qrels;
};

// Hits of queries query_ids[i] (hits[i]) as a run, scores as ranked.
data::RankedRun ranked_run(const std::vector<std::string>& query_ids,
                           const std::vector<std::vector<retrieval::Hit>>& hits);

struct ScalePoint {
  float scale;
  double score;  // the best nDCG@10 of the alpha search at this scale
};

struct TaskAlphaTuning {
  std::size_t queries = 0, documents = 0;
  std::size_t candidates = 0;  // stage-1 candidates per query: min(100, documents)
  double cosine_ndcg = 0.0;    // nDCG@10 of cosine alone (alpha 0)
  AlphaResult tuned;           // nDCG@10 of cosine + alpha * sparsity over the search, at `scale`
  float scale = 0.0f;          // the chosen magnitude gate (0 = none)
  std::vector<ScalePoint> scale_curve;  // every scale tried, in order (one point when only 0)
};

// Indexes the task's documents with E (`dense`) and Es (`sparse`), encodes the queries once, and
// tunes alpha for nDCG@10 of cos + alpha * `sparsity` over min(100, documents) candidates, at
// each magnitude gate of `scales` (the first strict maximum wins). InvalidArgument for an empty
// task, no scales, or a scale that is not finite and >= 0.
TaskAlphaTuning tune_alpha_on_task(const RetrievalTask& task, const std::shared_ptr<Encoder>& dense,
                                   const std::shared_ptr<Encoder>& sparse, scoring::Sparsity sparsity,
                                   const AlphaSearch& search = {}, const std::vector<float>& scales = {0.0f});

// Writes the tuned alpha into the model directory's manifest (training.alpha, the search, the
// reference edge, and `dev` with the dev scores added), the alpha that search and run default to;
// with more than one scale tried, the chosen one as training.sparsity_scale (0 = none) and the
// scale curve under `dev`.
void record_tuned_alpha(const std::string& model_dir, const TaskAlphaTuning& tuning, const AlphaSearch& search,
                        nlohmann::json dev);

}  // namespace counterpoint::eval
