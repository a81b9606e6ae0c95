// `counterpoint search` (one query or a file, against a saved index) and
// `counterpoint run` (a whole configuration on a BEIR dataset and an explicit qrels file).
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "counterpoint/app/beir_run.h"
#include "counterpoint/app/index_search.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/corpus_files.h"
#include "counterpoint/data/run.h"
#include "counterpoint/eval/retrieval_task.h"
#include "counterpoint/retrieval/explain.h"

namespace counterpoint::cli {

namespace {

// The options both commands take beside the search options: encoders and the query prefix.
struct ModelArgs {
  std::string model, sparse_model, verifier, prefix;
  int threads = 0;
  CLI::Option *model_option = nullptr, *sparse_option = nullptr, *prefix_option = nullptr;
};

void add_model_options(CLI::App* cmd, ModelArgs& a, const std::string& model_default) {
  a.model = model_default;
  a.model_option = cmd->add_option("--model", a.model, "Dense encoder E (name or directory); search: default the index's own");
  a.sparse_option = cmd->add_option("--sparse-model", a.sparse_model,
                                    "Sparse-aware encoder Es, needed by sparsity scorers; search: default the index's own");
  cmd->add_option("--verifier", a.verifier,
                  "Map verifier for --scorer verifier: a directory from `train verifier` or a TorchScript file");
  cmd->add_option("--threads", a.threads, "Encoder threads (0 = all cores)");
  a.prefix_option =
      cmd->add_option("--prefix", a.prefix, "Query prefix overriding the model's (e.g. a stance instruction)");
}

std::optional<std::string> given(const CLI::Option* option, const std::string& value) {
  return option->count() ? std::optional<std::string>(value) : std::nullopt;
}

// `stance` is printed for sparsity scorers, the only ones it changes; beside the score and the
// cosine, only the components the search measured (a 0 there would read as measured).
void print_hits(const data::Query& query, const std::vector<retrieval::Hit>& hits,
                const index::DocumentIndex& index, const retrieval::StanceReading* stance,
                const app::MeasuredComponents& measured) {
  std::cout << "query " << query.id << ": " << query.text << "\n";
  if (stance) std::cout << "  stance " << stance->describe() << "\n";
  for (std::size_t r = 0; r < hits.size(); ++r) {
    const auto& h = hits[r];
    std::string text = index.text(h.slot);
    if (text.size() > 100) text = text.substr(0, 97) + "...";
    std::cout << "  " << std::setw(2) << r + 1 << ". " << std::fixed << std::setprecision(4) << h.score
              << "  cos " << h.cosine;
    if (measured.sparsity) std::cout << "  sparsity " << h.sparsity;
    if (measured.bm25) std::cout << "  bm25 " << h.bm25;
    if (measured.token) std::cout << "  token " << h.token;
    std::cout << "  " << h.id << "  " << text << "\n";
  }
}

void print_run_report(const app::BeirRunReport& r, const std::string& tune) {
  if (r.tuning) {
    std::cout << "alpha curve (" << tune << " search, nDCG@10):\n";
    for (const auto& p : r.tuning->curve) std::cout << "  alpha " << p.alpha << "  " << p.score << "\n";
    std::cout << "best alpha " << r.tuning->best_alpha << "  nDCG@10 " << r.tuning->best_score << "\n";
    if (std::isfinite(r.tuning->reference_alpha) && tune != "reference") {
      std::cout << "reference search's left edge " << r.tuning->reference_alpha << "  nDCG@10 "
                << r.tuning->reference_score << "\n";
    }
  }
  std::cout << "queries " << r.queries << "  hits per query " << r.k << "  " << r.scoring << "\n";
  for (const auto& [name, value] : r.metrics) {
    std::cout << name << "\t" << std::fixed << std::setprecision(4) << value << "\n";
  }
}

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) if (!item.empty()) items.push_back(item);
  return items;
}

}  // namespace

void add_search_commands(CLI::App& app) {
  // ---- search --------------------------------------------------------------------------
  struct SearchCommandArgs {
    app::IndexSearchOptions options;
    ModelArgs models;
    SearchArgs search;
    std::string query, query_file, trec_out;
    bool keep_self = false, explain = false;
  };
  auto a = std::make_shared<SearchCommandArgs>();
  auto* search = app.add_subcommand("search", "Search a saved index");
  search->add_option("--index", a->options.index, "Index directory (from `index build`)")->required();
  auto* q_opt = search->add_option("--query", a->query, "One query text");
  auto* f_opt = search->add_option("--queries", a->query_file,
                                   "queries.jsonl, a .csv/.tsv with id and text columns, or a file of one query per line");
  q_opt->excludes(f_opt);
  auto* trec_opt = search->add_option("--trec", a->trec_out, "Write a TREC run file instead of readable output");
  search->add_flag("--explain", a->explain,
                   "After each query's hits, why its top hit scores as it does: the tokens that align worst and the "
                   "Es coordinates that carry the difference (readable output only)")
      ->excludes(trec_opt);
  search->add_flag("--keep-self", a->keep_self,
                   "With --queries: keep a query's own id in its results (removed by default, as in run and BEIR)");
  add_model_options(search, a->models, kDefaultDenseModel);
  a->models.model_option->default_str("the index's own");  // search loads the models the index records
  add_search_options(search, a->search, retrieval::SearchOptions{});
  search->callback([a] {
    if (a->query.empty() && a->query_file.empty()) throw InvalidArgument("give --query TEXT or --queries FILE");
    auto& o = a->options;
    if (!a->trec_out.empty()) {
      require_safe_output(a->trec_out, "--trec",
                          {{"--index", o.index}, {"--queries", a->query_file}, {"--model", a->models.model},
                           {"--sparse-model", a->models.sparse_model}, {"--verifier", a->models.verifier}});
    }
    o.search = a->search.resolve();
    o.model = given(a->models.model_option, a->models.model);
    o.sparse_model = given(a->models.sparse_option, a->models.sparse_model);
    o.verifier = a->models.verifier;
    o.prefix = given(a->models.prefix_option, a->models.prefix);
    o.threads = a->models.threads;
    // Queries from a file have ids of their own, often corpus ids too (ArguAna): a query never
    // retrieves itself unless asked to. A --query has no id to exclude.
    o.exclude_query_ids = !a->query_file.empty() && !a->keep_self;
    const auto queries = a->query_file.empty() ? std::vector<data::Query>{{"q1", a->query, nlohmann::json::object()}}
                                               : data::load_query_file(a->query_file);
    const auto r = app::search_index(o, queries);
    if (!r.excluded_own_ids.empty()) {
      std::cerr << "note: " << r.excluded_own_ids.size() << " of " << queries.size()
                << " queries have the id of a corpus passage (first: " << r.excluded_own_ids.front()
                << "); as in BEIR, a query's own id is left out of its hits (--keep-self keeps it)\n";
    }
    if (!a->trec_out.empty()) {
      data::write_trec_run(a->trec_out, eval::ranked_run(query_ids(queries), r.hits));
      std::cout << "wrote " << a->trec_out << " (" << r.scoring << ")\n";
      return;
    }
    std::cout << r.scoring << "\n";
    for (std::size_t i = 0; i < queries.size(); ++i) {
      const bool signed_by_stance = o.search.scorer == retrieval::Scorer::kSparsity && i < r.stances.size();
      print_hits(queries[i], r.hits[i], r.retriever->index(), signed_by_stance ? &r.stances[i] : nullptr,
                 app::measured_components(o.search));
      if (!a->explain || r.hits[i].empty()) continue;
      std::cout << retrieval::describe(retrieval::explain(*r.retriever, queries[i].text, r.hits[i][0].id, 5, 5,
                                                          o.search.sparsity, o.search.stance,
                                                          o.prefix ? &*o.prefix : nullptr));
    }
  });

  // ---- run -----------------------------------------------------------------------------
  struct RunCommandArgs {
    app::BeirRunOptions options;
    ModelArgs models;
    SearchArgs search;
    std::string metrics, tune;
  };
  auto r = std::make_shared<RunCommandArgs>();
  for (const auto& m : r->options.metrics) r->metrics += (r->metrics.empty() ? "" : ",") + m;
  auto* run = app.add_subcommand("run", "Run a configuration on a BEIR dataset and an explicit qrels file");
  run->add_option("--dataset", r->options.dataset, "BEIR dataset directory")->required();
  run->add_option("--qrels", r->options.qrels, "Qrels file; only its queries are run")->required();
  run->add_option("--out", r->options.out, "TREC run file to write");
  run->add_option("--index-cache", r->options.index_cache, "Index directory to reuse, or to create when absent");
  run->add_option("--metrics", r->metrics, "Comma-separated metrics to print");
  run->add_option("--tune-alpha", r->tune, "Tune alpha on these qrels first: interval (best point of the reference search), reference (its left edge, as the SparseCL code returns) or grid");
  run->add_flag("--keep-self", r->options.keep_self, "Keep a query's own id in its results (BEIR removes it)");
  add_feature_cache_options(run, r->options.feature_cache);
  add_model_options(run, r->models, r->options.model);
  add_search_options(run, r->search, r->options.search);
  run->callback([r] {
    auto& o = r->options;
    o.metrics = split_commas(r->metrics);
    if (!r->tune.empty()) o.tune_alpha = eval::parse_alpha_search(r->tune);
    o.search = r->search.resolve();
    if (r->search.given("k")) o.k = o.search.k;
    o.model = r->models.model;
    o.sparse_model = r->models.sparse_model;
    o.verifier = r->models.verifier;
    o.prefix = given(r->models.prefix_option, r->models.prefix);
    o.threads = r->models.threads;
    print_run_report(app::run_beir(o, stderr_progress("encoding corpus")), r->tune);
  });
}

}  // namespace counterpoint::cli
