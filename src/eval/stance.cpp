#include "counterpoint/eval/stance.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "counterpoint/core/errors.h"
#include "counterpoint/eval/metrics.h"

namespace counterpoint::eval {
namespace {

std::string required_text(const nlohmann::json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || !(it->is_string() || it->is_number_integer())) {
    throw InvalidArgument(where + ": needs a string field \"" + key + "\"");
  }
  return it->is_string() ? it->get<std::string>() : it->dump();
}

StanceLabel label_from(const nlohmann::json& object, const std::string& where) {
  return {required_text(object, "topic_id", where),
          canonical_stance(required_text(object, "stance", where), where)};
}

double discount(std::size_t position) { return 1.0 / std::log2(static_cast<double>(position) + 2.0); }

}  // namespace

std::string canonical_stance(const std::string& stance, const std::string& where) {
  std::string lower = stance;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "pro" || lower == "support" || lower == "supporting") return "pro";
  if (lower == "con" || lower == "attack" || lower == "attacking" || lower == "contest") return "con";
  throw InvalidArgument(where + ": unknown stance \"" + stance +
                        "\" (expected pro/support or con/attack)");
}

std::map<std::string, StanceLabel> stance_labels(
    const std::map<std::string, nlohmann::json>& metadata) {
  std::map<std::string, StanceLabel> labels;
  for (const auto& [id, fields] : metadata) labels[id] = label_from(fields, "metadata of \"" + id + "\"");
  return labels;
}

std::map<std::string, StanceLabel> stance_labels(const std::vector<data::Query>& queries) {
  std::map<std::string, StanceLabel> labels;
  for (const data::Query& query : queries) {
    labels[query.id] = label_from(query.extra, "query \"" + query.id + "\"");
  }
  return labels;
}

DocumentClass classify(const StanceLabel& query, const StanceLabel& document) {
  const bool same_topic = query.topic == document.topic;
  const bool same_stance = query.stance == document.stance;
  if (same_topic) return same_stance ? DocumentClass::kPositive : DocumentClass::kHard;
  return same_stance ? DocumentClass::kSemiHard : DocumentClass::kEasy;
}

StanceEvaluation evaluate_stance(const data::RankedRun& run,
                                 const std::map<std::string, StanceLabel>& query_labels,
                                 const std::map<std::string, StanceLabel>& document_labels) {
  StanceEvaluation evaluation;
  for (const auto& [query_id, query_label] : query_labels) {
    std::size_t positives = 0;
    for (const auto& [doc_id, doc_label] : document_labels) {
      positives += classify(query_label, doc_label) == DocumentClass::kPositive ? 1 : 0;
    }
    StanceScores& scores = evaluation.per_query[query_id];
    auto it = run.find(query_id);
    if (it == run.end() || positives == 0) continue;

    std::set<std::string> seen;
    for (const data::ScoredDoc& doc : it->second) {
      if (!std::isfinite(doc.score) || !seen.insert(doc.doc_id).second) {
        throw InvalidArgument("evaluate_stance: document \"" + doc.doc_id + "\" for query \"" +
                              query_id + "\" is listed twice or has a non-finite score");
      }
    }
    const std::vector<data::ScoredDoc> ranking = trec_order(it->second);
    std::size_t counts[4] = {0, 0, 0, 0};
    double dcg = 0.0;
    for (std::size_t i = 0; i < ranking.size() && i < std::max<std::size_t>(positives, 10); ++i) {
      auto label = document_labels.find(ranking[i].doc_id);
      if (label == document_labels.end()) {
        throw InvalidArgument("evaluate_stance: document \"" + ranking[i].doc_id +
                              "\" ranked for query \"" + query_id + "\" has no stance label");
      }
      const DocumentClass cls = classify(query_label, label->second);
      if (i < positives) ++counts[static_cast<int>(cls)];
      if (i < 10 && cls == DocumentClass::kPositive) dcg += discount(i);
    }
    double idcg = 0.0;
    for (std::size_t i = 0; i < std::min<std::size_t>(positives, 10); ++i) idcg += discount(i);
    const double r = static_cast<double>(positives);
    scores.precision_at_r = counts[static_cast<int>(DocumentClass::kPositive)] / r;
    scores.hard_at_r = counts[static_cast<int>(DocumentClass::kHard)] / r;
    scores.semi_at_r = counts[static_cast<int>(DocumentClass::kSemiHard)] / r;
    scores.easy_at_r = counts[static_cast<int>(DocumentClass::kEasy)] / r;
    scores.ndcg_at_10 = dcg / idcg;
  }
  if (!evaluation.per_query.empty()) {
    StanceScores& mean = evaluation.mean;
    for (const auto& [query_id, s] : evaluation.per_query) {
      mean.precision_at_r += s.precision_at_r;
      mean.hard_at_r += s.hard_at_r;
      mean.semi_at_r += s.semi_at_r;
      mean.easy_at_r += s.easy_at_r;
      mean.ndcg_at_10 += s.ndcg_at_10;
    }
    const double n = static_cast<double>(evaluation.per_query.size());
    for (double* total : {&mean.precision_at_r, &mean.hard_at_r, &mean.semi_at_r, &mean.easy_at_r,
                          &mean.ndcg_at_10}) {
      *total /= n;
    }
  }
  return evaluation;
}

}  // namespace counterpoint::eval
