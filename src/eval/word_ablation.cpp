#include "counterpoint/eval/word_ablation.h"

#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include "counterpoint/core/errors.h"
#include "counterpoint/text/words.h"

namespace counterpoint::eval {
namespace {

constexpr double kDenominatorEpsilon = 1e-9;

std::string join_without(const std::vector<std::string>& words, std::size_t skipped) {
  std::string joined;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i == skipped) continue;
    if (!joined.empty()) joined += ' ';
    joined += words[i];
  }
  return joined;
}

std::string keyword_form(const std::string& word) {
  std::size_t begin = 0;
  std::size_t end = word.size();
  while (begin < end && std::ispunct(static_cast<unsigned char>(word[begin]))) ++begin;
  while (end > begin && std::ispunct(static_cast<unsigned char>(word[end - 1]))) --end;
  std::string form = word.substr(begin, end - begin);
  for (char& c : form) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return form;
}

MeanStd mean_std(const std::vector<double>& values) {
  MeanStd result;
  if (values.empty()) return result;
  for (double v : values) result.mean += v;
  result.mean /= static_cast<double>(values.size());
  double squares = 0.0;
  for (double v : values) squares += (v - result.mean) * (v - result.mean);
  result.std = std::sqrt(squares / static_cast<double>(values.size()));
  return result;
}

}  // namespace

WordAblation ablate_words(const AblationQuery& query, const std::string& document,
                          const CosineFunction& cosine, const AblationOptions& options) {
  if (!cosine) throw InvalidArgument("ablate_words: cosine function is empty");
  auto compose = options.compose ? options.compose
                                 : [](const std::string& instruction, const std::string& claim) {
                                     return "Instruct: " + instruction + "\nQuery: " + claim;
                                   };
  auto checked_cosine = [&](const std::string& text) {
    const double value = cosine(text, document);
    if (!std::isfinite(value)) {
      throw InvalidArgument("ablate_words: cosine is not finite for query \"" + text + "\"");
    }
    return value;
  };
  std::set<std::string> keywords;
  for (const std::string& keyword : options.stance_keywords) keywords.insert(keyword_form(keyword));

  const double base = checked_cosine(compose(query.instruction, query.claim));
  const std::vector<std::string> instruction_words = text::whitespace_words(query.instruction);
  const std::vector<std::string> claim_words = text::whitespace_words(query.claim);

  WordAblation result;
  double instruction_mass = 0.0;
  double claim_mass = 0.0;
  double stance_delta_sum = 0.0;
  for (std::size_t i = 0; i < instruction_words.size(); ++i) {
    const double delta =
        checked_cosine(compose(join_without(instruction_words, i), query.claim)) - base;
    result.instruction_deltas.push_back(delta);
    instruction_mass += std::fabs(delta);
    if (keywords.count(keyword_form(instruction_words[i])) > 0) {
      stance_delta_sum += delta;
      ++result.stance_words;
    }
  }
  for (std::size_t i = 0; i < claim_words.size(); ++i) {
    const double delta =
        checked_cosine(compose(query.instruction, join_without(claim_words, i))) - base;
    result.claim_deltas.push_back(delta);
    claim_mass += std::fabs(delta);
  }
  const double total = instruction_mass + claim_mass + kDenominatorEpsilon;
  result.ris = instruction_mass / total;
  result.rcs = claim_mass / total;
  result.di = result.stance_words == 0 ? 0.0 : stance_delta_sum / result.stance_words;
  return result;
}

std::map<std::string, AblationSummary> summarize_ablation(
    const std::vector<std::pair<std::string, WordAblation>>& labelled) {
  struct Columns {
    std::vector<double> ris, rcs, di;
  };
  std::map<std::string, Columns> columns;
  for (const auto& [label, ablation] : labelled) {
    Columns& c = columns[label];
    c.ris.push_back(ablation.ris);
    c.rcs.push_back(ablation.rcs);
    if (ablation.stance_words > 0) c.di.push_back(ablation.di);
  }
  std::map<std::string, AblationSummary> summaries;
  for (const auto& [label, c] : columns) {
    AblationSummary& summary = summaries[label];
    summary.documents = c.ris.size();
    summary.ris = mean_std(c.ris);
    summary.rcs = mean_std(c.rcs);
    summary.di = mean_std(c.di);
    summary.di_documents = c.di.size();
  }
  return summaries;
}

}  // namespace counterpoint::eval
