#include "counterpoint/eval/metrics.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "counterpoint/core/errors.h"

namespace counterpoint::eval {
namespace {

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::size_t parse_cutoff(const std::string& name, const std::string& cutoff) {
  std::size_t k = 0;
  auto [end, error] = std::from_chars(cutoff.data(), cutoff.data() + cutoff.size(), k);
  if (error != std::errc() || end != cutoff.data() + cutoff.size() || cutoff.empty() || k == 0) {
    throw InvalidArgument("metric \"" + name + "\": cutoff \"" + cutoff +
                          "\" must be a positive integer");
  }
  return k;
}

int grade_of(const std::map<std::string, int>& judgements, const std::string& doc_id) {
  auto it = judgements.find(doc_id);
  return it == judgements.end() ? 0 : it->second;
}

double discount(std::size_t position) { return 1.0 / std::log2(static_cast<double>(position) + 2.0); }

}  // namespace

Metric parse_metric(const std::string& name) {
  const std::string lower = lowercase(name);
  if (lower == "p@r" || lower == "r-precision" || lower == "rprec") {
    return {MetricKind::kRPrecision, 0, "p@r"};
  }
  if (lower == "map") return {MetricKind::kAveragePrecision, 0, "map"};
  const std::size_t at = lower.find('@');
  if (at == std::string::npos) {
    throw InvalidArgument("unknown metric \"" + name +
                          "\" (expected ndcg@k, recall@k, p@k, mrr@k, acc@k, map, map@k or p@r)");
  }
  const std::string family = lower.substr(0, at);
  const std::string cutoff = lower.substr(at + 1);
  static const std::map<std::string, std::pair<MetricKind, std::string>> kFamilies{
      {"ndcg", {MetricKind::kNdcg, "ndcg"}},           {"recall", {MetricKind::kRecall, "recall"}},
      {"p", {MetricKind::kPrecision, "p"}},            {"precision", {MetricKind::kPrecision, "p"}},
      {"mrr", {MetricKind::kMrr, "mrr"}},              {"acc", {MetricKind::kAccuracy, "acc"}},
      {"accuracy", {MetricKind::kAccuracy, "acc"}},    {"map", {MetricKind::kAveragePrecision, "map"}},
  };
  auto it = kFamilies.find(family);
  if (it == kFamilies.end()) {
    throw InvalidArgument("unknown metric \"" + name +
                          "\" (expected ndcg@k, recall@k, p@k, mrr@k, acc@k, map, map@k or p@r)");
  }
  const std::size_t k = parse_cutoff(name, cutoff);
  return {it->second.first, k, it->second.second + "@" + std::to_string(k)};
}

std::vector<ScoredDoc> trec_order(std::vector<ScoredDoc> docs) {
  std::sort(docs.begin(), docs.end(), [](const ScoredDoc& a, const ScoredDoc& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.doc_id > b.doc_id;
  });
  return docs;
}

double score_ranking(const Metric& metric, const std::vector<ScoredDoc>& ranking,
                     const std::map<std::string, int>& judgements) {
  std::size_t relevant_total = 0;
  for (const auto& [doc, grade] : judgements) relevant_total += grade > 0 ? 1 : 0;

  const std::size_t depth = metric.kind == MetricKind::kRPrecision ? relevant_total
                            : metric.kind == MetricKind::kAveragePrecision && metric.k == 0 ? ranking.size()
                                                                                         : metric.k;
  const std::size_t seen = std::min(depth, ranking.size());
  std::size_t relevant_seen = 0;
  double dcg = 0.0, precision_sum = 0.0;
  std::size_t first_relevant = 0;  // 1-based; 0 = none
  for (std::size_t i = 0; i < seen; ++i) {
    const int grade = grade_of(judgements, ranking[i].doc_id);
    if (grade <= 0) continue;
    ++relevant_seen;
    dcg += grade * discount(i);
    precision_sum += static_cast<double>(relevant_seen) / static_cast<double>(i + 1);
    if (first_relevant == 0) first_relevant = i + 1;
  }

  switch (metric.kind) {
    case MetricKind::kNdcg: {
      std::vector<int> ideal;
      for (const auto& [doc, grade] : judgements) {
        if (grade > 0) ideal.push_back(grade);
      }
      std::sort(ideal.begin(), ideal.end(), std::greater<int>());
      double idcg = 0.0;
      for (std::size_t i = 0; i < std::min(metric.k, ideal.size()); ++i) idcg += ideal[i] * discount(i);
      return idcg > 0.0 ? dcg / idcg : 0.0;
    }
    case MetricKind::kRecall:
      return relevant_total == 0 ? 0.0 : static_cast<double>(relevant_seen) / relevant_total;
    case MetricKind::kPrecision:
      return static_cast<double>(relevant_seen) / metric.k;
    case MetricKind::kMrr:
      return first_relevant == 0 ? 0.0 : 1.0 / static_cast<double>(first_relevant);
    case MetricKind::kAccuracy:
      return relevant_seen > 0 ? 1.0 : 0.0;
    case MetricKind::kRPrecision:
      return relevant_total == 0 ? 0.0 : static_cast<double>(relevant_seen) / relevant_total;
    case MetricKind::kAveragePrecision:
      return relevant_total == 0 ? 0.0 : precision_sum / static_cast<double>(relevant_total);
  }
  return 0.0;
}

std::size_t required_depth(const std::vector<std::string>& metrics, const Qrels& qrels,
                           const EvalOptions& options) {
  std::size_t depth = 0;
  for (const auto& name : metrics) {
    const Metric metric = parse_metric(name);
    if (metric.kind != MetricKind::kRPrecision) {
      depth = std::max(depth, metric.k);
      continue;
    }
    for (const auto& [query, judgements] : qrels) {
      std::size_t relevant = 0;
      for (const auto& [doc, grade] : judgements) relevant += grade > 0;
      depth = std::max(depth, relevant);
    }
  }
  return depth + (options.exclude_self && depth > 0 ? 1 : 0);
}

EvalResult evaluate(const RankedRun& run, const Qrels& qrels,
                    const std::vector<std::string>& metrics, const EvalOptions& options) {
  // A metric named twice (or in two spellings, "p@r" and "r-precision") is computed and reported
  // once: adding it twice into one mean would report 2.0.
  std::vector<Metric> parsed;
  std::set<std::string> named;
  for (const std::string& name : metrics) {
    Metric metric = parse_metric(name);
    if (named.insert(metric.name).second) parsed.push_back(std::move(metric));
  }

  if (qrels.empty()) throw InvalidArgument("evaluate: the qrels judge no query");
  if (run.empty()) throw InvalidArgument("evaluate: the run ranks no query");
  EvalResult result;
  for (const Metric& metric : parsed) result.mean[metric.name] = 0.0;
  for (const auto& [query_id, judgements] : qrels) {
    std::vector<ScoredDoc> ranking;
    if (auto it = run.find(query_id); it == run.end()) {
      result.unranked.push_back(query_id);
    } else {
      std::set<std::string> seen;
      for (const ScoredDoc& doc : it->second) {
        if (!std::isfinite(doc.score)) {
          throw InvalidArgument("evaluate: score of document \"" + doc.doc_id + "\" for query \"" +
                                query_id + "\" is not finite");
        }
        if (!seen.insert(doc.doc_id).second) {
          throw InvalidArgument("evaluate: document \"" + doc.doc_id +
                                "\" listed twice for query \"" + query_id + "\"");
        }
        if (options.exclude_self && doc.doc_id == query_id) continue;
        ranking.push_back(doc);
      }
      ranking = trec_order(std::move(ranking));
    }
    std::map<std::string, double>& scores = result.per_query[query_id];
    for (const Metric& metric : parsed) {
      const double value = score_ranking(metric, ranking, judgements);
      scores[metric.name] = value;
      result.mean[metric.name] += value;
    }
  }
  if (result.unranked.size() == qrels.size()) {
    // Every query would score 0: query ids that do not match (q1 against q01) rather than a run.
    throw InvalidArgument("evaluate: no query of the qrels has a ranking in the run (" +
                          std::to_string(run.size()) + " ranked queries, e.g. '" + run.begin()->first + "'; " +
                          std::to_string(qrels.size()) + " judged, e.g. '" + qrels.begin()->first +
                          "'): the run's query ids must be the qrels' ids");
  }
  for (auto& [name, total] : result.mean) total /= static_cast<double>(result.per_query.size());
  return result;
}

std::string describe_unranked(const EvalResult& result) {
  if (result.unranked.empty()) return {};
  std::string text = std::to_string(result.unranked.size()) + " of " + std::to_string(result.per_query.size()) +
                     " judged queries have no ranking in the run (scored 0):";
  const std::size_t shown = std::min<std::size_t>(result.unranked.size(), 5);
  for (std::size_t i = 0; i < shown; ++i) text += (i ? ", " : " ") + result.unranked[i];
  if (shown < result.unranked.size()) text += ", ...";
  return text;
}

double roc_auc(const std::vector<float>& positives, const std::vector<float>& negatives) {
  if (positives.empty() || negatives.empty()) {
    throw InvalidArgument("roc_auc needs at least one positive and one negative score (got " +
                          std::to_string(positives.size()) + " and " + std::to_string(negatives.size()) + ")");
  }
  // Rank-sum form: sort all scores once, give tied runs their mean rank.
  std::vector<std::pair<float, bool>> all;
  for (float s : positives) all.emplace_back(s, true);
  for (float s : negatives) all.emplace_back(s, false);
  for (const auto& [score, positive] : all) {
    if (!std::isfinite(score)) throw InvalidArgument("roc_auc: scores must be finite");
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double positive_rank_sum = 0.0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double mean_rank = (double(i + 1) + double(j)) / 2.0;
    for (std::size_t t = i; t < j; ++t) positive_rank_sum += all[t].second ? mean_rank : 0.0;
    i = j;
  }
  const double p = double(positives.size());
  const double n = double(negatives.size());
  return (positive_rank_sum - p * (p + 1.0) / 2.0) / (p * n);
}

}  // namespace counterpoint::eval
