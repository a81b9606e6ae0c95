// `counterpoint clean`: corpus cleaning with contradiction retrieval. Parses the arguments,
// loads the corpus, the trusted texts and the encoders, and calls app::clean_corpus.
#include <iostream>

#include "commands.h"
#include "counterpoint/app/corpus_cleaning.h"
#include "counterpoint/app/corpus_index.h"
#include "counterpoint/data/corpus_files.h"

namespace counterpoint::cli {

namespace {

struct CleanArgs {
  std::string trusted, corpus, out, model = kDefaultDenseModel, sparse_model = kDefaultSparseModel, index;
  std::size_t top = retrieval::CleaningOptions{}.top, candidates = retrieval::CleaningOptions{}.candidates;
  double threshold = 0.0, alpha = 0.0;
  float scale = 0.0f;
  bool has_threshold = false, has_alpha = false, no_guard = false;
  CLI::Option* scale_option = nullptr;
  int threads = 0;
};

}  // namespace

void add_clean_command(CLI::App& app) {
  auto a = std::make_shared<CleanArgs>();
  auto* cmd = app.add_subcommand(
      "clean", "Remove the passages of a corpus that contradict trusted texts (cos + alpha * sparsity)");
  cmd->add_option("--trusted", a->trusted,
                  "Trusted texts: a queries.jsonl, a .csv/.tsv with id and text columns, or one text per line")
      ->required();
  cmd->add_option("--corpus", a->corpus, std::string("The corpus: ") + data::kCorpusFormats)->required();
  cmd->add_option("--out", a->out, "New directory for corpus.jsonl (cleaned) and report.jsonl")->required();
  auto* top = cmd->add_option("--top", a->top, "Passages removed per trusted text (the paper: 3)");
  cmd->add_option("--threshold", a->threshold, "Instead of --top: remove every candidate scoring at least this")
      ->default_str("none")
      ->each([a](const std::string&) { a->has_threshold = true; })
      ->excludes(top);
  cmd->add_option("--model", a->model, "Dense encoder E (name or directory)");
  cmd->add_option("--sparse-model", a->sparse_model, "Sparse-aware encoder Es (name or directory)");
  cmd->add_option("--alpha", a->alpha, "Weight of the sparsity term")
      ->default_str("Es's recorded alpha")
      ->each([a](const std::string&) { a->has_alpha = true; });
  a->scale_option = add_sparsity_scale_option(cmd, a->scale);
  cmd->add_option("--candidates", a->candidates, "Stage-1 candidates per trusted text (K)");
  cmd->add_option("--index", a->index, "Index directory of the corpus to reuse (built and saved there if absent)");
  cmd->add_flag("--no-guard", a->no_guard, "Do not give identical pairs the guard value");
  cmd->add_option("--threads", a->threads, "Encoder threads (0 = all cores)");
  cmd->callback([a] {
    retrieval::CleaningOptions options;
    options.top = a->top;
    if (a->has_threshold) options.threshold = float(a->threshold);
    if (a->has_alpha) options.alpha = float(a->alpha);
    if (a->scale_option->count()) options.sparsity_scale = a->scale;
    options.candidates = a->candidates;
    options.identical_guard = !a->no_guard;
    app::check_cleaning(options, a->out);  // before the corpus is read or a model loaded
    std::vector<std::string> trusted;
    const auto texts = data::load_query_file(a->trusted, "--trusted",
                                             "texts (one per line, or a .jsonl, .csv or .tsv with id and text)");
    for (const auto& q : texts) trusted.push_back(q.text);
    const auto corpus = data::load_documents(a->corpus);
    auto encoder = load_encoder(a->model, a->threads);
    auto sparse = load_encoder(a->sparse_model, a->threads);
    retrieval::Retriever retriever(app::cached_corpus_index(a->index, corpus, *encoder, sparse.get()), encoder, sparse);
    const auto report = app::clean_corpus(retriever, trusted, corpus, options, a->out);
    std::cout << app::describe_cleaning(report, options, a->out) << "\n";
  });
}

}  // namespace counterpoint::cli
