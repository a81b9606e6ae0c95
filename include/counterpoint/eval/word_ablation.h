// counterpoint/eval/word_ablation.h: word-ablation diagnostics for instruction + claim queries.
// For a query q and a related document p, each whitespace word w of the instruction and of the
// claim is deleted in turn and delta_w = cos(q without w, p) - cos(q, p) is recorded.
//   RIS = sum |delta| over instruction words / (sum |delta| over all words + 1e-9)
//   RCS = sum |delta| over claim words        / (sum |delta| over all words + 1e-9)
//   DI  = mean signed delta over instruction words that are stance keywords
// RIS near 0 means the model ignores the instruction (and thus the requested stance).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace counterpoint::eval {

// cos(query text, document); the document string is whatever the caller's encoder needs
// (an id or a text).
using CosineFunction = std::function<double(const std::string& query, const std::string& document)>;

struct AblationQuery {
  std::string instruction;
  std::string claim;
};

struct AblationOptions {
  // Builds the query text from an instruction and a claim; the default gives
  // "Instruct: {instruction}\nQuery: {claim}". Template words are never deleted.
  std::function<std::string(const std::string& instruction, const std::string& claim)> compose;
  // Matched case-insensitively after stripping leading/trailing ASCII punctuation.
  std::vector<std::string> stance_keywords{"support", "supports", "supporting", "supportive",
                                           "attack",  "attacks",  "attacking",  "refute",
                                           "refutes", "refuting", "oppose",     "opposes",
                                           "opposing", "against", "counter",    "contradict",
                                           "contradicts", "contradicting"};
};

struct WordAblation {
  std::vector<double> instruction_deltas;  // one per instruction word, in order
  std::vector<double> claim_deltas;        // one per claim word, in order
  double ris = 0.0;
  double rcs = 0.0;
  double di = 0.0;                  // 0 when stance_words == 0
  std::size_t stance_words = 0;     // instruction words that matched a stance keyword
};

// Deleting a word re-joins the remaining words of that part with single spaces; the unablated
// query is compose(instruction, claim) as given. Non-finite cosines throw InvalidArgument.
WordAblation ablate_words(const AblationQuery& query, const std::string& document,
                          const CosineFunction& cosine, const AblationOptions& options = {});

struct MeanStd {
  double mean = 0.0;
  double std = 0.0;  // population standard deviation (numpy's default, ddof 0)
};

struct AblationSummary {
  std::size_t documents = 0;
  MeanStd ris;
  MeanStd rcs;
  MeanStd di;                   // over the documents whose instruction had a stance keyword
  std::size_t di_documents = 0;
};

// Groups per-document results by class label ("positive", "hard", ...) and summarises each.
std::map<std::string, AblationSummary> summarize_ablation(
    const std::vector<std::pair<std::string, WordAblation>>& labelled);

}  // namespace counterpoint::eval
