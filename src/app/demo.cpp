#include "counterpoint/app/demo.h"

#include "counterpoint/app/corpus_index.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint::app {

namespace {

// A name under `models` when that directory holds it, else the usual resolution.
std::string model_path(const std::string& name, const std::string& models) {
  if (!models.empty() && !path_exists(join_path(name, "manifest.json")) &&
      path_exists(join_path(join_path(models, name), "manifest.json"))) {
    return join_path(models, name);
  }
  return resolve_model(name);
}

}  // namespace

bool DemoReport::is_contradiction(const std::string& query_id, const std::string& document_id) const {
  auto q = qrels.find(query_id);
  if (q == qrels.end()) return false;
  auto d = q->second.find(document_id);
  return d != q->second.end() && d->second > 0;
}

DemoReport run_demo(const DemoOptions& options) {
  if (options.k == 0) throw InvalidArgument("k must be >= 1");
  if (!path_exists(join_path(options.corpus, "corpus.jsonl"))) {
    throw FileNotFound("corpus " + options.corpus + ": corpus.jsonl not found");
  }
  if (!options.qrels.empty() && !path_exists(options.qrels)) throw FileNotFound("qrels not found: " + options.qrels);
  // A given alpha or scale out of range is reported before any model loads.
  retrieval::choose_alpha(options.alpha, nullptr);
  retrieval::choose_sparsity_scale(options.sparsity_scale, nullptr);
  const std::string qrels_file =
      options.qrels.empty() ? data::qrels_path(options.corpus, "contradictions") : options.qrels;
  data::Qrels qrels = path_exists(qrels_file) ? data::load_qrels(qrels_file) : data::Qrels{};
  if (!options.qrels.empty() && qrels.empty()) {
    throw InvalidArgument("qrels " + options.qrels + " judges no query: the demo counts contradictions ranked first "
                          "against its judgements");
  }
  const std::string model_dir = model_path(options.model, options.models);
  const std::string sparse_dir = model_path(options.sparse_model, options.models);

  EncoderConfig config;
  config.threads = options.threads;
  auto encoder = Encoder::load(model_dir, config);
  auto sparse = Encoder::load(sparse_dir, config);
  DemoReport report;
  report.alpha = retrieval::choose_alpha(options.alpha, sparse.get());
  report.scale = retrieval::choose_sparsity_scale(options.sparsity_scale, sparse.get());
  report.encoder = encoder->manifest().name;
  report.sparse_encoder = sparse->manifest().name;

  const auto dataset = data::load_beir(options.corpus);
  report.qrels = std::move(qrels);
  auto idx = cached_corpus_index("", dataset.corpus, *encoder, sparse.get());
  report.index = idx;
  report.passages = dataset.corpus.size();
  retrieval::Retriever retriever(idx, encoder, sparse);

  retrieval::SearchOptions cosine_only;
  cosine_only.k = options.k;
  cosine_only.candidates = retrieval::default_candidates(options.k);
  retrieval::SearchOptions contradiction = cosine_only;
  contradiction.scorer = retrieval::Scorer::kSparsity;
  contradiction.alpha = report.alpha.value;
  contradiction.sparsity.scale = report.scale.value;
  std::vector<std::string> texts;
  for (const auto& q : dataset.queries) texts.push_back(q.text);
  const auto encoded = retriever.encode_queries(texts, contradiction);
  // Both scorers rank the same stage-1 candidates.
  const auto candidates = retriever.find_candidates(encoded, contradiction);
  const auto by_cosine = retriever.rescore(encoded, candidates, cosine_only);
  const auto by_contradiction = retriever.rescore(encoded, candidates, contradiction);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    DemoQuery q{dataset.queries[i], by_cosine[i], by_contradiction[i], std::nullopt};
    if (!q.by_contradiction.empty()) {
      q.why_first = retrieval::explain(retriever, texts[i], q.by_contradiction[0].id, 3, 3, contradiction.sparsity);
    }
    report.first_by_cosine += !q.by_cosine.empty() && report.is_contradiction(q.query.id, q.by_cosine[0].id);
    report.first_by_contradiction +=
        !q.by_contradiction.empty() && report.is_contradiction(q.query.id, q.by_contradiction[0].id);
    report.queries.push_back(std::move(q));
  }
  return report;
}

}  // namespace counterpoint::app
