// counterpoint/app: corpus_cleaning.h owns "clean this corpus against these trusted texts" end to
// end: the settings and the output folder checked before any search, the passages contradicting a
// trusted text found (retrieval::find_contradicted) and, given a folder, the corpus without them
// and the report written there (retrieval::write_cleaned_corpus). The CLI's `clean` and Python's
// clean_corpus call it.
#pragma once

#include <string>
#include <vector>

#include "counterpoint/data/beir.h"
#include "counterpoint/retrieval/corpus_cleaning.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::app {

// InvalidArgument for settings retrieval::validate refuses or an `out_dir` that is neither absent
// nor an empty folder; cheap, for callers to make before loading models or reading a corpus.
void check_cleaning(const retrieval::CleaningOptions& options, const std::string& out_dir);

// The passages of the retriever's index that contradict a trusted text. With a non-empty `out_dir`,
// `corpus` (the documents the index holds, as they are to be written) without the removed ones goes
// to <out_dir>/corpus.jsonl and one line per removal to <out_dir>/report.jsonl.
retrieval::CleaningReport clean_corpus(const retrieval::Retriever& retriever, const std::vector<std::string>& trusted,
                                       const std::vector<data::Document>& corpus,
                                       const retrieval::CleaningOptions& options, const std::string& out_dir = "");

// The one-line summary of a cleaning: what was removed, by which rule, and where it went.
std::string describe_cleaning(const retrieval::CleaningReport& report, const retrieval::CleaningOptions& options,
                              const std::string& out_dir);

}  // namespace counterpoint::app
