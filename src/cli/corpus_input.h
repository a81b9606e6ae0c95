// Reading the corpora and query files the CLI accepts, in one place.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "counterpoint/data/beir.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/index/document_index.h"

namespace counterpoint::cli {

// A BEIR directory (its corpus.jsonl), a .jsonl corpus or a .tsv corpus.
std::vector<data::Document> load_documents(const std::string& path);
// A BEIR queries.jsonl, or a text file with one query per line (ids q1, q2, ...).
std::vector<data::Query> load_query_file(const std::string& path);

// The index saved at `cache` when there is one; otherwise a flat index of `corpus` encoded with
// `encoder` (and `sparse` when not null), saved to `cache` unless `cache` is empty.
std::shared_ptr<index::DocumentIndex> cached_corpus_index(const std::string& cache,
                                                          const std::vector<data::Document>& corpus,
                                                          const Encoder& encoder, const Encoder* sparse);

}  // namespace counterpoint::cli
