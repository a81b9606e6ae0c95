#include "counterpoint/app/corpus_cleaning.h"

namespace counterpoint::app {

void check_cleaning(const retrieval::CleaningOptions& options, const std::string& out_dir) {
  retrieval::validate(options);
  if (!out_dir.empty()) retrieval::require_cleaning_output(out_dir);
}

retrieval::CleaningReport clean_corpus(const retrieval::Retriever& retriever, const std::vector<std::string>& trusted,
                                       const std::vector<data::Document>& corpus,
                                       const retrieval::CleaningOptions& options, const std::string& out_dir) {
  check_cleaning(options, out_dir);
  retrieval::CleaningReport report = retrieval::find_contradicted(retriever, trusted, options);
  if (!out_dir.empty()) retrieval::write_cleaned_corpus(out_dir, corpus, trusted, report);
  return report;
}

std::string describe_cleaning(const retrieval::CleaningReport& report, const retrieval::CleaningOptions& options,
                              const std::string& out_dir) {
  std::string line = retrieval::describe_weights(report.alpha, report.scale) + "\nremoved " +
                     std::to_string(report.removed.size()) + " of " + std::to_string(report.documents) +
                     " passages contradicting " + std::to_string(report.trusted) + " trusted texts (" +
                     (options.threshold ? "score >= " + std::to_string(*options.threshold)
                                        : "top " + std::to_string(options.top) + " each") +
                     "; " + std::to_string(report.protected_passages) + " passages are trusted texts and were kept)";
  if (!out_dir.empty()) line += " -> " + out_dir + "/corpus.jsonl, " + out_dir + "/report.jsonl";
  return line;
}

}  // namespace counterpoint::app
