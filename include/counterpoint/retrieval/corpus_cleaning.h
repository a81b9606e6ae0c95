// counterpoint/retrieval/corpus_cleaning.h: corpus cleaning with contradiction retrieval, the
// SparseCL paper's downstream use. Given trusted texts, every passage of an index that
// contradicts one of them is found by a search with cos + alpha * sparsity (each trusted text is
// a query) and removed: each trusted text's top `top` hits (the paper removes 3), or every
// candidate whose final score reaches `threshold`. A passage whose text is itself a trusted text
// is never removed. The cleaned corpus and a report are written to a new directory; the input is
// never modified.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/data/beir.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::retrieval {

struct CleaningOptions {
  std::size_t top = 3;                  // hits removed per trusted text (without a threshold)
  std::optional<float> threshold;       // when set: every candidate with final score >= threshold
  std::size_t candidates = 1000;        // stage-1 depth per trusted text (K)
  std::optional<float> alpha;           // unset: the sparse encoder's recorded alpha (choose_alpha)
  std::optional<float> sparsity_scale;  // magnitude gate tau; unset: Es's recorded one (choose_sparsity_scale)
  bool identical_guard = true;
};

struct Removal {
  std::string id;            // the removed passage
  std::size_t trusted = 0;   // index of the first trusted text (in input order) that removed it
  std::size_t rank = 0;      // its rank (0-based) among that trusted text's hits
  float score = 0.0f, cosine = 0.0f, sparsity = 0.0f;
};

struct CleaningReport {
  std::vector<Removal> removed;  // in order of discovery, each passage once
  std::size_t documents = 0;     // live passages of the index
  std::size_t trusted = 0;
  std::size_t protected_passages = 0;  // passages whose text is a trusted text
  AlphaChoice alpha;
  ScaleChoice scale;
};

// InvalidArgument for top 0 without a threshold, a non-finite threshold or alpha, a sparsity scale
// that is not finite and >= 0, 0 candidates or fewer candidates than top.
void validate(const CleaningOptions& options);
// InvalidArgument unless `out_dir` is absent or an empty directory: the check
// write_cleaned_corpus makes, for callers to make before any work.
void require_cleaning_output(const std::string& out_dir);

// Searches every trusted text; InvalidArgument for no trusted texts, top 0 without a threshold,
// a non-finite threshold, or a retriever without a sparse encoder.
CleaningReport find_contradicted(const Retriever& retriever, const std::vector<std::string>& trusted,
                                 const CleaningOptions& options);

// Writes <out_dir>/corpus.jsonl (the documents of `corpus` that were not removed, in order, as
// {"_id", "title", "text"}) and <out_dir>/report.jsonl (one line per removal: id, its text, the
// trusted text, rank, score components, alpha). `out_dir` must not exist yet or be an empty
// directory (InvalidArgument otherwise, so a corpus is never overwritten); both files are written
// atomically.
void write_cleaned_corpus(const std::string& out_dir, const std::vector<data::Document>& corpus,
                          const std::vector<std::string>& trusted, const CleaningReport& report);

}  // namespace counterpoint::retrieval
