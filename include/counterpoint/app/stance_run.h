// counterpoint/app/stance_run.h: stance-aware retrieval evaluated on a set labelled like IBM
// Debater Claim Stance. Each query asks for the claims of one stance on one topic; its text is an
// instruction for that stance followed by the topic (BM25 sees the topic only). Scores P@R,
// Hard@R, Semi@R, Easy@R and nDCG@10 per instruction template and their mean, and optionally the
// word-ablation diagnostics RIS / RCS / DI per document class. `counterpoint stance` calls this.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "counterpoint/app/beir_run.h"
#include "counterpoint/core/progress.h"
#include "counterpoint/encoder/feature_cache.h"
#include "counterpoint/eval/stance.h"
#include "counterpoint/eval/word_ablation.h"
#include "counterpoint/training/triples.h"

namespace counterpoint::app {

enum class StanceTemplates { kHeldOut, kTraining };
// "held-out" or "training"; InvalidArgument naming both otherwise.
StanceTemplates parse_stance_templates(const std::string& name);
std::string to_string(StanceTemplates templates);

struct StanceRunOptions {
  std::string dataset;      // BEIR directory with metadata.jsonl (topic_id, stance per claim)
  std::string qrels;        // only its queries are run
  std::string model = kDefaultDenseModel;
  // The stance stage: Es (name or directory) for a sparsity scorer in `search`. Each query's
  // instruction sets the sign of the sparsity term (retrieval/stance.h): cos + alpha * sparsity for
  // an attack instruction, cos - alpha * sparsity for a support one; Es reads the topic alone.
  std::string sparse_model;
  std::string index_cache;  // index directory to reuse, or to create when absent
  StanceTemplates templates = StanceTemplates::kHeldOut;
  std::size_t ablation = 0;  // word ablation on up to N documents per class per query (first template)
  int threads = 0;
  // Folder of the pooled-feature cache shared by every run ("" = none): a corpus goes through a
  // network once, and E and every head Es over it reuse the features.
  std::string feature_cache = default_cache_directory();
  // Stage 1 (dense, bm25 or hybrid) and its depth; k is set from the positives (P@R needs R).
  retrieval::SearchOptions search = BeirRunOptions{}.search;
};

struct StanceRunReport {
  std::size_t queries = 0;
  std::string encoder;  // E's name
  std::string scoring;  // stage 2 as retrieval::describe_scoring says it (scorer, alpha and where it came from)
  std::vector<std::pair<training::StanceTemplate, eval::StanceScores>> per_template;
  eval::StanceScores mean;  // mean over the templates
  // With ablation: the first template, and the summary per document class.
  std::map<std::string, eval::AblationSummary> ablation;
};

// Files exist, counts sane, the model name resolves. InvalidArgument / FileNotFound.
void validate(const StanceRunOptions& options);

// validate(), then the evaluation. `progress` sees the corpus encoding; `ablation_progress` the
// queries of the word ablation.
StanceRunReport run_stance(const StanceRunOptions& options, const ProgressCallback& progress = {},
                           const ProgressCallback& ablation_progress = {});

}  // namespace counterpoint::app
