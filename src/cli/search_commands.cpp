// `counterpoint search` (one query or a file, against a saved index) and
// `counterpoint run` (a whole configuration on a BEIR dataset and an explicit qrels file).
#include <iomanip>
#include <cmath>
#include <iostream>
#include <set>
#include <sstream>

#include "commands.h"
#include "counterpoint/retrieval/explain.h"
#include "counterpoint/eval/retrieval_task.h"
#include "corpus_input.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/run.h"
#include "counterpoint/eval/alpha_search.h"
#include "counterpoint/eval/metrics.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::cli {

namespace {

struct SearchArgs {
  std::string model = kDefaultDenseModel, sparse_model, scorer = "cosine", stage1 = "dense", fusion = "rsf";
  std::string prefix, verifier;
  bool has_prefix = false, has_alpha = false, no_guard = false;
  float alpha = retrieval::kDefaultAlpha, lambda = 0.1f;
  std::size_t k = 10, candidates = 100;
  int threads = 0, ef_search = 0, nprobe = 0;
};

void add_search_options(CLI::App* cmd, SearchArgs& a) {
  cmd->add_option("--model", a.model, "Dense encoder E (name or directory); search: default the index's own");
  cmd->add_option("--sparse-model", a.sparse_model,
                  "Sparse-aware encoder Es, needed by sparsity scorers; search: default the index's own");
  cmd->add_option("--scorer", a.scorer, "cosine, hoyer, l2l1, kappa4, mean, maxsim, alignment, verifier");
  cmd->add_option("--verifier", a.verifier,
                  "Map verifier for --scorer verifier: a directory from `train verifier` or a TorchScript file");
  cmd->add_option("--alpha", a.alpha, "Weight of the sparsity term (default: the alpha Es records, else 1)")
      ->default_str("")
      ->each([&a](const std::string&) { a.has_alpha = true; });
  cmd->add_option("--stage1", a.stage1, "dense, bm25 or hybrid");
  cmd->add_option("--fusion", a.fusion, "rsf or rrf (hybrid stage 1)");
  cmd->add_option("--lambda", a.lambda, "RSF weight of BM25");
  cmd->add_option("-k,--k", a.k, "Hits per query (run: default and minimum, the deepest cut-off of --metrics)");
  cmd->add_option("--candidates", a.candidates, "Stage-1 candidates K");
  cmd->add_option("--threads", a.threads, "Encoder threads (0 = all cores)");
  cmd->add_option("--ef-search", a.ef_search, "HNSW efSearch for this call");
  cmd->add_option("--nprobe", a.nprobe, "IVF nprobe for this call");
  cmd->add_option("--prefix", a.prefix, "Query prefix overriding the model's (e.g. a stance instruction)")
      ->each([&a](const std::string&) { a.has_prefix = true; });
  cmd->add_flag("--no-guard", a.no_guard, "Disable the near-identical guard of the sparsity term");
}

retrieval::AlphaChoice alpha_of(const SearchArgs& a, const Encoder* sparse) {
  return retrieval::choose_alpha(a.has_alpha ? std::optional<float>(a.alpha) : std::nullopt, sparse);
}

// What a reader needs to reproduce a result: the scorer and, for sparsity scorers, the alpha and
// where it came from.
std::string scoring_line(const retrieval::SearchOptions& options, const retrieval::AlphaChoice& alpha) {
  std::string line = "scorer " + retrieval::to_string(options.scorer);
  if (options.scorer == retrieval::Scorer::kSparsity) {
    line += " (" + scoring::to_string(options.sparsity.function) + "), " + alpha.describe();
  }
  return line;
}

std::shared_ptr<const scoring::MapVerifier> load_verifier(const SearchArgs& a) {
  return a.verifier.empty() ? nullptr : scoring::load_map_verifier(a.verifier);
}

// `alpha` comes from choose_alpha(), which needs the loaded Es.
retrieval::SearchOptions to_options(const SearchArgs& a, const retrieval::AlphaChoice& alpha) {
  retrieval::SearchOptions o;
  o.k = a.k;
  o.candidates = a.candidates;
  retrieval::set_scorer(o, a.scorer);
  o.alpha = alpha.value;
  o.stage1 = retrieval::parse_stage1(a.stage1);
  o.fusion = retrieval::parse_fusion(a.fusion);
  o.fusion_lambda = a.lambda;
  o.sparsity.identical_guard = !a.no_guard;
  o.dense_params.ef_search = a.ef_search;
  o.dense_params.nprobe = a.nprobe;
  return o;
}

data::RankedRun to_run(const std::vector<data::Query>& queries,
                       const std::vector<std::vector<retrieval::Hit>>& hits) {
  std::vector<std::string> ids;
  for (const auto& q : queries) ids.push_back(q.id);
  return eval::ranked_run(ids, hits);
}

void print_hits(const data::Query& query, const std::vector<retrieval::Hit>& hits,
                const index::DocumentIndex& index) {
  std::cout << "query " << query.id << ": " << query.text << "\n";
  for (std::size_t r = 0; r < hits.size(); ++r) {
    const auto& h = hits[r];
    std::string text = index.text(h.slot);
    if (text.size() > 100) text = text.substr(0, 97) + "...";
    std::cout << "  " << std::setw(2) << r + 1 << ". " << std::fixed << std::setprecision(4) << h.score
              << "  cos " << h.cosine << "  sparsity " << h.sparsity << "  bm25 " << h.bm25 << "  "
              << h.id << "  " << text << "\n";
  }
}

}  // namespace

void add_search_commands(CLI::App& app) {
  // ---- search --------------------------------------------------------------------------
  auto sa = std::make_shared<SearchArgs>();
  auto index_dir = std::make_shared<std::string>();
  auto query = std::make_shared<std::string>();
  auto query_file = std::make_shared<std::string>();
  auto trec_out = std::make_shared<std::string>();
  auto* search = app.add_subcommand("search", "Search a saved index");
  search->add_option("--index", *index_dir, "Index directory (from `index build`)")->required();
  auto* q_opt = search->add_option("--query", *query, "One query text");
  auto* f_opt = search->add_option("--queries", *query_file, "queries.jsonl or a file of one query per line");
  q_opt->excludes(f_opt);
  search->add_option("--trec", *trec_out, "Write a TREC run file instead of readable output");
  auto keep_self = std::make_shared<bool>(false);
  auto explain = std::make_shared<bool>(false);
  search->add_flag("--explain", *explain,
                   "Under each query's top hit, the tokens that align worst and the Es coordinates that carry the "
                   "difference");
  search->add_flag("--keep-self", *keep_self,
                   "With --queries: keep a query's own id in its results (removed by default, as in run and BEIR)");
  add_search_options(search, *sa);
  search->callback([=] {
    if (query->empty() && query_file->empty()) throw InvalidArgument("give --query TEXT or --queries FILE");
    std::vector<data::Query> queries;
    if (!query->empty()) queries.push_back({"q1", *query, nlohmann::json::object()});
    else queries = load_query_file(*query_file);
    auto loaded = std::make_shared<index::DocumentIndex>(index::DocumentIndex::load(*index_dir));
    // Without --model / --sparse-model, the models the index records (installed ones, by name).
    const auto recorded_name = [](const std::string& id) { return id.substr(0, id.rfind('@')); };
    std::string model = sa->model, sparse_model = sa->sparse_model;
    if (search->get_option("--model")->count() == 0 && !loaded->options().encoder_id.empty()) {
      model = recorded_name(loaded->options().encoder_id);
    }
    if (sparse_model.empty() && !loaded->options().sparse_encoder_id.empty()) {
      sparse_model = recorded_name(loaded->options().sparse_encoder_id);
    }
    auto encoder = load_encoder(model, sa->threads);
    std::shared_ptr<Encoder> sparse = sparse_model.empty() ? nullptr : load_encoder(sparse_model, sa->threads);
    retrieval::Retriever retriever(loaded, encoder, sparse, load_verifier(*sa));
    std::vector<std::string> texts;
    for (const auto& q : queries) texts.push_back(q.text);
    const auto alpha = alpha_of(*sa, sparse.get());
    const auto options = to_options(*sa, alpha);
    auto encoded = retriever.encode_queries(texts, options, sa->has_prefix ? &sa->prefix : nullptr);
    // Queries from a file have ids of their own, often corpus ids too (ArguAna): a query never
    // retrieves itself unless asked to. A --query has no id to exclude.
    if (!query_file->empty() && !*keep_self) for (const auto& q : queries) encoded.exclude.push_back({q.id});
    const auto hits = retriever.search_encoded(encoded, options);
    if (!trec_out->empty()) {
      data::write_trec_run(*trec_out, to_run(queries, hits));
      std::cout << "wrote " << *trec_out << " (" << scoring_line(options, alpha) << ")\n";
    } else {
      std::cout << scoring_line(options, alpha) << "\n";
      for (std::size_t i = 0; i < queries.size(); ++i) {
        print_hits(queries[i], hits[i], *loaded);
        if (*explain && !hits[i].empty()) {
          std::cout << retrieval::describe(retrieval::explain(retriever, queries[i].text, hits[i][0].id, 5, 5,
                                                              options.sparsity));
        }
      }
    }
  });

  // ---- run -----------------------------------------------------------------------------
  struct RunArgs {
    std::string dataset, qrels, out, index_cache, metrics = "ndcg@10,recall@100,mrr@10,acc@1";
    std::string tune;  // "", or an eval::parse_alpha_search name
    bool keep_self = false;
  };
  auto ra = std::make_shared<RunArgs>();
  auto rs = std::make_shared<SearchArgs>();
  rs->candidates = 1000;
  auto* run = app.add_subcommand("run", "Run a configuration on a BEIR dataset and an explicit qrels file");
  run->add_option("--dataset", ra->dataset, "BEIR dataset directory")->required();
  run->add_option("--qrels", ra->qrels, "Qrels file; only its queries are run")->required();
  run->add_option("--out", ra->out, "TREC run file to write");
  run->add_option("--index-cache", ra->index_cache, "Index directory to reuse, or to create when absent");
  run->add_option("--metrics", ra->metrics, "Comma-separated metrics to print");
  run->add_option("--tune-alpha", ra->tune, "Tune alpha on these qrels first: interval (best point of the reference search), reference (its left edge, as the SparseCL code returns) or grid");
  run->add_flag("--keep-self", ra->keep_self, "Keep a query's own id in its results (BEIR removes it)");
  add_search_options(run, *rs);
  run->callback([=] {
    const auto dataset = data::load_beir(ra->dataset);
    const auto qrels = data::load_qrels(ra->qrels);
    std::vector<data::Query> queries;
    for (const auto& q : dataset.queries) if (qrels.count(q.id)) queries.push_back(q);
    if (queries.empty()) throw InvalidArgument("no query of " + ra->dataset + " has judgements in " + ra->qrels);

    auto encoder = load_encoder(rs->model, rs->threads);
    std::shared_ptr<Encoder> sparse = rs->sparse_model.empty() ? nullptr : load_encoder(rs->sparse_model, rs->threads);
    auto idx = cached_corpus_index(ra->index_cache, dataset.corpus, *encoder, sparse.get());
    retrieval::Retriever retriever(idx, encoder, sparse, load_verifier(*rs));
    auto alpha = alpha_of(*rs, sparse.get());
    auto options = to_options(*rs, alpha);
    std::vector<std::string> texts;
    for (const auto& q : queries) texts.push_back(q.text);
    auto encoded = retriever.encode_queries(texts, options, rs->has_prefix ? &rs->prefix : nullptr);
    if (!ra->keep_self) for (const auto& q : queries) encoded.exclude.push_back({q.id});

    std::vector<std::string> metric_names;
    std::stringstream ms(ra->metrics);
    for (std::string m; std::getline(ms, m, ',');) if (!m.empty()) metric_names.push_back(m);
    eval::EvalOptions eval_options;
    eval_options.exclude_self = !ra->keep_self;
    // Every metric must see its whole cut-off: a run shallower than recall@100 would score the
    // missing ranks as misses and print a wrong figure.
    const std::size_t depth = eval::required_depth(metric_names, qrels, eval_options);
    if (run->get_option("-k")->count() == 0) {
      options.k = std::max(options.k, depth);
    } else if (options.k < depth) {
      throw InvalidArgument("-k " + std::to_string(options.k) + " is below the " + std::to_string(depth) +
                            " hits per query that --metrics " + ra->metrics +
                            " need; raise -k or drop the deeper metrics");
    }
    if (options.candidates < options.k) {
      throw InvalidArgument("--candidates " + std::to_string(options.candidates) + " is below the " +
                            std::to_string(options.k) + " hits per query this run keeps; raise --candidates");
    }

    std::string alpha_line = scoring_line(options, alpha);
    if (!ra->tune.empty()) {
      if (options.scorer != retrieval::Scorer::kSparsity) throw InvalidArgument("--tune-alpha needs a sparsity scorer");
      eval::AlphaSearch search;
      search.kind = eval::parse_alpha_search(ra->tune);
      const auto result = eval::tune_alpha([&](double a) {
        auto o = options;
        o.alpha = float(a);
        return eval::evaluate(to_run(queries, retriever.search_encoded(encoded, o)), qrels, {"ndcg@10"}, eval_options)
            .mean.at("ndcg@10");
      }, search);
      std::cout << "alpha curve (" << ra->tune << " search, nDCG@10):\n";
      for (const auto& p : result.curve) std::cout << "  alpha " << p.alpha << "  " << p.score << "\n";
      std::cout << "best alpha " << result.best_alpha << "  nDCG@10 " << result.best_score << "\n";
      if (std::isfinite(result.reference_alpha) && search.kind != eval::AlphaSearch::Kind::kReference) {
        std::cout << "reference search's left edge " << result.reference_alpha << "  nDCG@10 "
                  << result.reference_score << "\n";
      }
      options.alpha = float(result.best_alpha);
      std::ostringstream tuned;
      tuned << "scorer " << retrieval::to_string(options.scorer) << " ("
            << scoring::to_string(options.sparsity.function) << "), alpha " << options.alpha << " (tuned by the "
            << ra->tune << " search on " << ra->qrels << ")";
      alpha_line = tuned.str();
    }
    const auto run_result = to_run(queries, retriever.search_encoded(encoded, options));
    if (!ra->out.empty()) data::write_trec_run(ra->out, run_result);
    const auto scores = eval::evaluate(run_result, qrels, metric_names, eval_options);
    std::cout << "queries " << queries.size() << "  hits per query " << options.k << "  " << alpha_line << "\n";
    for (const auto& [name, value] : scores.mean) std::cout << name << "\t" << std::fixed << std::setprecision(4) << value << "\n";
  });
}

}  // namespace counterpoint::cli
