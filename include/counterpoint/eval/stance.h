// counterpoint/eval/stance.h: stance-aware retrieval metrics (IBM Debater Claim Stance style).
// Every document and query carries a (topic, stance) label. For a query asking for stance s on
// topic t, a document is
//   positive   same topic, stance s          hard       same topic, other stance
//   semi-hard  other topic, stance s         easy       other topic, other stance
// With R = the number of positives in the labelled corpus, the metrics over the top R are
// P@R (positives), Hard@R (stance errors), Semi@R (topical collapse) and Easy@R, each a share of
// R, and nDCG@10 uses binary gains with the ideal DCG over min(10, R) positives.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "counterpoint/data/beir.h"
#include "counterpoint/data/run.h"

namespace counterpoint::eval {

struct StanceLabel {
  std::string topic;
  std::string stance;  // canonical: "pro" or "con"
};

enum class DocumentClass { kPositive, kHard, kSemiHard, kEasy };

// "pro"/"support"/"supporting" -> "pro", "con"/"attack"/"attacking"/"contest" -> "con" (any case);
// anything else throws InvalidArgument naming `where`.
std::string canonical_stance(const std::string& stance, const std::string& where);

// Labels from metadata objects {"topic_id", "stance"} (ids as in data::load_metadata) and from
// query extra fields of the same names. A missing or non-string field throws InvalidArgument.
std::map<std::string, StanceLabel> stance_labels(const std::map<std::string, nlohmann::json>& metadata);
std::map<std::string, StanceLabel> stance_labels(const std::vector<data::Query>& queries);

DocumentClass classify(const StanceLabel& query, const StanceLabel& document);

struct StanceScores {
  double precision_at_r = 0.0;
  double hard_at_r = 0.0;
  double semi_at_r = 0.0;
  double easy_at_r = 0.0;
  double ndcg_at_10 = 0.0;
};

struct StanceEvaluation {
  std::map<std::string, StanceScores> per_query;  // every labelled query
  StanceScores mean;                              // mean over per_query
};

// Ranks each query's documents in trec_order. A labelled query without a ranking, or without
// any positive in the corpus, scores 0 everywhere and still counts in the mean. A ranked
// document without a label throws InvalidArgument.
StanceEvaluation evaluate_stance(const data::RankedRun& run,
                                 const std::map<std::string, StanceLabel>& query_labels,
                                 const std::map<std::string, StanceLabel>& document_labels);

}  // namespace counterpoint::eval
