// counterpoint/eval: measuring retrieval quality. metrics.h owns the ranking metrics, computed
// exactly as trec_eval / pytrec_eval compute them so numbers compare with BEIR papers:
//   ndcg@k    graded gain = qrels grade (> 0 only), discount log2(rank + 1); the ideal ranking
//             sorts all of the query's positive grades, whether retrieved or not (ndcg_cut_k)
//   recall@k  relevant documents in the top k / relevant documents of the query (recall_k)
//   p@k       relevant documents in the top k / k, also when fewer than k were retrieved (P_k)
//   mrr@k     1 / rank of the first relevant document within the top k, else 0 (BEIR MRR@k)
//   acc@k     1 when a relevant document is in the top k (acc@1 = top-1 relevant; success_k)
//   p@r       R-precision: relevant documents in the top R / R, R = relevant count (Rprec)
//   map       average precision: the sum of precision at each relevant document's rank over the
//             run as given / the query's relevant count (map); map@k over the top k (map_cut_k)
// Relevant means grade > 0; unjudged documents count as grade 0.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "counterpoint/data/beir.h"
#include "counterpoint/data/run.h"

namespace counterpoint::eval {

using data::Qrels;
using data::RankedRun;
using data::ScoredDoc;

enum class MetricKind { kNdcg, kRecall, kPrecision, kMrr, kAccuracy, kRPrecision, kAveragePrecision };

struct Metric {
  MetricKind kind;
  std::size_t k = 0;  // cutoff; 0 for p@r and for map over the whole run
  std::string name;   // canonical spelling, the key in EvalResult
};

// Parses "ndcg@10", "recall@100", "p@10" (or "precision@10"), "mrr@10", "acc@1", "map",
// "map@100", "p@r" (or "r-precision"), case-insensitively. Unknown names and cutoffs that are not positive integers
// throw InvalidArgument.
Metric parse_metric(const std::string& name);

struct EvalOptions {
  // BEIR convention: a document whose id equals the query id is removed from that query's
  // ranking before scoring (ArguAna queries are themselves corpus documents).
  bool exclude_self = true;
};

struct EvalResult {
  // query id -> metric name -> value, for every query in the qrels.
  std::map<std::string, std::map<std::string, double>> per_query;
  // metric name -> mean over per_query.
  std::map<std::string, double> mean;
  // Queries of the qrels without a ranking in the run (each scored 0), in id order: `counterpoint
  // eval` and cp.evaluate warn with them, as an unranked query is more often a mismatched id than
  // an empty result.
  std::vector<std::string> unranked;
};

// "N of M judged queries have no ranking in the run (scored 0): id, id, ..." (first ids only);
// empty when every judged query is ranked.
std::string describe_unranked(const EvalResult& result);

// How many hits per query a run must hold so that every metric sees its whole cut-off: the
// largest k, the largest relevant count of any query for p@r, plus one when exclude_self drops a
// query's own id first. Evaluating a shallower run would silently score missing ranks as misses.
std::size_t required_depth(const std::vector<std::string>& metrics, const Qrels& qrels,
                           const EvalOptions& options = {});

// The order trec_eval scores a ranking in, whatever order it was given in: score descending,
// ties broken by document id descending (byte-wise), as trec_eval's sort does.
std::vector<ScoredDoc> trec_order(std::vector<ScoredDoc> docs);

// Scores every query that has qrels. The mean is over those queries: a query with qrels but no
// ranking in `run` scores 0 on every metric (trec_eval -c) and is listed in `unranked`, a query
// whose qrels hold no positive grade scores 0, and rankings of queries without qrels are ignored.
// Empty qrels, a run that ranks none of the judged queries (mismatched ids), a document listed
// twice in one ranking, a non-finite score or an unknown metric throws InvalidArgument.
EvalResult evaluate(const RankedRun& run, const Qrels& qrels,
                    const std::vector<std::string>& metrics, const EvalOptions& options = {});

// One metric of one query's ranking, which must already be in trec_order with self-matches
// removed; `judgements` maps document id -> grade.
double score_ranking(const Metric& metric, const std::vector<ScoredDoc>& ranking,
                     const std::map<std::string, int>& judgements);

// ROC-AUC of a score that should rank `positives` above `negatives`: the probability that a
// random positive scores higher than a random negative, ties counting one half (Mann-Whitney U).
// An empty list or a non-finite score throws InvalidArgument.
double roc_auc(const std::vector<float>& positives, const std::vector<float>& negatives);

}  // namespace counterpoint::eval
