// counterpoint/data/run.h: a ranked run (per query, documents with scores in rank order) and its
// TREC text format "qid Q0 docid rank score tag", the format trec_eval and pytrec_eval read.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace counterpoint::data {

struct ScoredDoc {
  std::string doc_id;
  float score = 0.0f;
  bool operator==(const ScoredDoc& other) const {
    return doc_id == other.doc_id && score == other.score;
  }
};

// query id -> documents in rank order (best first).
using RankedRun = std::map<std::string, std::vector<ScoredDoc>>;

// Writes one line per document, queries in id order, ranks 1, 2, ... in vector order. Scores
// are written in the shortest form that reads back to the same float, so read_trec_run
// returns exactly `run`. Ids or a tag that are empty, contain whitespace or begin with a
// byte-order mark (which readers drop at the start of a file), a non-finite score or a document
// listed twice for one query throw InvalidArgument.
void write_trec_run(const std::string& path, const RankedRun& run,
                    const std::string& tag = "counterpoint");

// Reads a TREC run (space- or tab-separated, 6 fields). Each query's documents are ordered by
// the rank column (file order among equal ranks); the tag is not kept. A score below a float's
// range (1e-320) reads as a zero of its sign. A malformed line, a score that is not a finite float
// (nan, inf, 1e39) or a document listed twice for one query throws CorruptFile "file:line: ...".
RankedRun read_trec_run(const std::string& path);

}  // namespace counterpoint::data
