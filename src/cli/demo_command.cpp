// `counterpoint demo`: the main job. Contradiction retrieval on a small BEIR-layout corpus,
// showing for each query the top hits under cosine alone and under cos + alpha * Hoyer with
// the default sparse-aware encoder, so a reader sees which passage each score prefers and why.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "counterpoint/retrieval/explain.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::cli {

namespace {

std::string label(const data::Qrels& qrels, const std::string& query, const std::string& doc) {
  auto q = qrels.find(query);
  if (q == qrels.end()) return "";
  auto d = q->second.find(doc);
  return d != q->second.end() && d->second > 0 ? "  <- contradiction" : "";
}

void print_ranking(const char* title, const std::vector<retrieval::Hit>& hits, const index::DocumentIndex& index,
                   const data::Qrels& qrels, const std::string& query_id) {
  std::cout << "  " << title << "\n";
  for (std::size_t r = 0; r < hits.size(); ++r) {
    const auto& h = hits[r];
    std::cout << "    " << r + 1 << ". score " << std::fixed << std::setprecision(3) << std::setw(6) << h.score
              << " = cos " << h.cosine << " + alpha * hoyer " << h.sparsity << "  [" << h.id << "] "
              << index.text(h.slot) << label(qrels, query_id, h.id) << "\n";
  }
}

}  // namespace

void add_demo_command(CLI::App& app) {
  struct Args {
    std::string models = default_models_dir(), corpus = default_example_corpus(), qrels;
    std::string model = kDefaultDenseModel, sparse_model = kDefaultSparseModel;
    float alpha = retrieval::kDefaultAlpha;
    std::size_t k = 3;
    int threads = 0;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("demo", "Contradiction retrieval on the bundled example corpus");
  cmd->add_option("--models", a->models, "Directory of installed models");
  cmd->add_option("--corpus", a->corpus, "BEIR-layout corpus directory");
  cmd->add_option("--qrels", a->qrels, "Qrels marking contradictions (default: <corpus>/qrels/contradictions.tsv)");
  cmd->add_option("--model", a->model, "Dense encoder E");
  cmd->add_option("--sparse-model", a->sparse_model, "Sparse-aware encoder Es");
  auto* alpha_option = cmd->add_option("--alpha", a->alpha, "Weight of the Hoyer term (default: the alpha Es records, else 1)")
                            ->default_str("");
  cmd->add_option("-k,--k", a->k, "Hits shown per ranking");
  cmd->add_option("--threads", a->threads, "Encoder threads (0 = all cores)");
  cmd->callback([a, alpha_option] {
    const auto resolve = [&](const std::string& m) {
      return path_exists(join_path(m, "manifest.json")) ? m : join_path(a->models, m);
    };
    EncoderConfig config;
    config.threads = a->threads;
    auto encoder = Encoder::load(resolve(a->model), config);
    auto sparse = Encoder::load(resolve(a->sparse_model), config);
    const auto alpha = retrieval::choose_alpha(
        alpha_option->count() ? std::optional<float>(a->alpha) : std::nullopt, sparse.get());

    const auto dataset = data::load_beir(a->corpus);
    const std::string qrels_file = a->qrels.empty() ? data::qrels_path(a->corpus, "contradictions") : a->qrels;
    const data::Qrels qrels = path_exists(qrels_file) ? data::load_qrels(qrels_file) : data::Qrels{};

    auto idx = std::make_shared<index::DocumentIndex>(retrieval::index_options_for(*encoder, sparse.get()));
    std::vector<std::string> ids, texts, queries;
    for (const auto& d : dataset.corpus) {
      ids.push_back(d.id);
      texts.push_back(data::encoding_text(d));
    }
    for (const auto& q : dataset.queries) queries.push_back(q.text);
    retrieval::add_documents(*idx, texts, ids, *encoder, sparse.get());
    retrieval::Retriever retriever(idx, encoder, sparse);

    retrieval::SearchOptions cosine_only;
    cosine_only.k = a->k;
    cosine_only.candidates = std::max<std::size_t>(a->k, 100);
    retrieval::SearchOptions contradiction = cosine_only;
    contradiction.scorer = retrieval::Scorer::kSparsity;
    contradiction.alpha = alpha.value;
    const auto encoded = retriever.encode_queries(queries, contradiction);
    const auto by_cosine = retriever.search_encoded(encoded, cosine_only);
    const auto by_contradiction = retriever.search_encoded(encoded, contradiction);

    std::cout << "counterpoint demo: " << dataset.corpus.size() << " passages, " << queries.size()
              << " queries; E = " << encoder->manifest().name << ", Es = " << sparse->manifest().name
              << ", " << alpha.describe() << "\n\n";
    std::size_t top_cosine = 0, top_contradiction = 0;
    for (std::size_t i = 0; i < queries.size(); ++i) {
      const auto& qid = dataset.queries[i].id;
      std::cout << "query [" << qid << "] " << queries[i] << "\n";
      print_ranking("cosine only:", by_cosine[i], *idx, qrels, qid);
      print_ranking("cos + alpha * Hoyer (contradiction search):", by_contradiction[i], *idx, qrels, qid);
      if (!by_contradiction[i].empty()) {
        std::cout << "  why the first hit (" << by_contradiction[i][0].id << "):\n"
                  << retrieval::describe(retrieval::explain(retriever, queries[i], by_contradiction[i][0].id, 3, 3,
                                                            contradiction.sparsity));
      }
      std::cout << "\n";
      if (!by_cosine[i].empty() && !label(qrels, qid, by_cosine[i][0].id).empty()) ++top_cosine;
      if (!by_contradiction[i].empty() && !label(qrels, qid, by_contradiction[i][0].id).empty()) ++top_contradiction;
    }
    if (!qrels.empty()) {
      std::cout << "contradiction ranked first: cosine only " << top_cosine << "/" << queries.size()
                << ", cos + alpha * Hoyer " << top_contradiction << "/" << queries.size() << "\n";
    }
  });
}

}  // namespace counterpoint::cli
