// Reading the corpora and query files the CLI accepts, in one place.
#pragma once

#include <string>
#include <vector>

#include "counterpoint/data/beir.h"

namespace counterpoint::cli {

// A BEIR directory (its corpus.jsonl), a .jsonl corpus or a .tsv corpus.
std::vector<data::Document> load_documents(const std::string& path);
// A BEIR queries.jsonl, or a text file with one query per line (ids q1, q2, ...).
std::vector<data::Query> load_query_file(const std::string& path);

}  // namespace counterpoint::cli
