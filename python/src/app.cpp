// counterpoint.run_beir, counterpoint.run_stance and counterpoint.clean_corpus: the library's
// workflows (the ones `counterpoint run`, `stance` and `clean` print), returning their reports as dicts.
#include "index.h"
#include "counterpoint/app/beir_run.h"
#include "counterpoint/app/corpus_cleaning.h"
#include "counterpoint/app/corpus_index.h"
#include "counterpoint/app/stance_run.h"
#include "counterpoint/text/words.h"

namespace counterpoint::python {

using namespace pybind11::literals;

namespace {

py::dict alpha_dict(const retrieval::AlphaChoice& alpha) {
  py::dict d;
  d["value"] = alpha.value;
  d["description"] = alpha.describe();
  return d;
}

py::dict beir_run(py::handle dataset, py::handle qrels, py::handle model, py::handle sparse_model, py::handle verifier,
                  const std::string& scorer, std::optional<double> alpha, std::optional<std::size_t> k,
                  std::size_t candidates, std::vector<std::string> metrics, std::optional<std::string> tune_alpha,
                  py::handle index_cache, py::handle out, bool keep_self, std::optional<std::string> prefix,
                  const std::string& stage1, const std::string& fusion, double fusion_lambda, int rrf_k, int threads,
                  std::optional<double> sparsity_scale, const std::string& stance, bool guard, int ef_search,
                  int nprobe, py::handle feature_cache, py::object progress) {
  app::BeirRunOptions o;
  o.dataset = path_argument(dataset, "dataset");
  o.qrels = path_argument(qrels, "qrels");
  o.model = path_argument(model, "model", kModelExpected);
  o.sparse_model = optional_path(sparse_model, "sparse_model", kModelExpected).value_or("");
  o.verifier = optional_path(verifier, "verifier").value_or("");
  // The search settings through the one table (k apart: None here means the metrics' depth).
  o.search = app::search_options_from(
      given_settings(py::dict("scorer"_a = scorer, "alpha"_a = alpha, "sparsity_scale"_a = sparsity_scale,
                              "candidates"_a = candidates, "stage1"_a = stage1, "fusion"_a = fusion,
                              "fusion_lambda"_a = fusion_lambda, "rrf_k"_a = rrf_k, "stance"_a = stance,
                              "guard"_a = guard, "ef_search"_a = ef_search, "nprobe"_a = nprobe)),
      o.search);
  o.k = k;
  o.metrics = std::move(metrics);
  if (tune_alpha) o.tune_alpha = eval::parse_alpha_search(*tune_alpha);
  if (auto cache = optional_path(index_cache, "index_cache")) o.index_cache = *cache;
  if (auto run_file = optional_path(out, "out")) o.out = *run_file;
  o.feature_cache = optional_path(feature_cache, "feature_cache").value_or("");
  o.keep_self = keep_self;
  o.prefix = prefix;
  o.threads = threads;
  ProgressBridge bridge(progress, "encoding corpus");
  const auto report = run_released(bridge, [&] { return app::run_beir(o, bridge.callback()); });
  py::dict d;
  d["queries"] = report.queries;
  d["k"] = report.k;
  d["scoring"] = report.scoring;
  d["alpha"] = alpha_dict(report.alpha);
  d["sparsity_scale"] = report.scale.value;
  d["metrics"] = report.metrics;
  if (report.tuning) {
    py::list curve;
    for (const auto& p : report.tuning->curve) curve.append(py::make_tuple(p.alpha, p.score));
    d["alpha_curve"] = curve;
  }
  return d;
}

py::dict scores_dict(const eval::StanceScores& s) {
  static const std::pair<const char*, double eval::StanceScores::*> kFields[] = {
      {"p@r", &eval::StanceScores::precision_at_r}, {"hard@r", &eval::StanceScores::hard_at_r},
      {"semi@r", &eval::StanceScores::semi_at_r},   {"easy@r", &eval::StanceScores::easy_at_r},
      {"ndcg@10", &eval::StanceScores::ndcg_at_10}};
  py::dict d;
  for (const auto& [name, field] : kFields) d[name] = s.*field;
  return d;
}

py::dict stance_run(py::handle dataset, py::handle qrels, py::handle model, const std::string& templates,
                    const std::string& stage1, const std::string& fusion, double fusion_lambda, int rrf_k,
                    std::size_t candidates, py::handle index_cache, std::size_t ablation, int threads,
                    py::handle sparse_model, const std::string& scorer, std::optional<double> alpha,
                    std::optional<double> sparsity_scale, py::handle feature_cache, py::object progress) {
  app::StanceRunOptions o;
  o.dataset = path_argument(dataset, "dataset");
  o.qrels = path_argument(qrels, "qrels");
  o.model = path_argument(model, "model", kModelExpected);
  o.sparse_model = optional_path(sparse_model, "sparse_model", kModelExpected).value_or("");
  o.search = app::search_options_from(
      given_settings(py::dict("stage1"_a = stage1, "fusion"_a = fusion, "fusion_lambda"_a = fusion_lambda,
                              "rrf_k"_a = rrf_k, "candidates"_a = candidates, "scorer"_a = scorer, "alpha"_a = alpha,
                              "sparsity_scale"_a = sparsity_scale)),
      o.search);
  o.templates = app::parse_stance_templates(templates);
  if (auto cache = optional_path(index_cache, "index_cache")) o.index_cache = *cache;
  o.feature_cache = optional_path(feature_cache, "feature_cache").value_or("");
  o.ablation = ablation;
  o.threads = threads;
  ProgressBridge bridge(progress, "encoding corpus");
  const auto report = run_released(bridge, [&] { return app::run_stance(o, bridge.callback()); });
  py::dict d;
  d["queries"] = report.queries;
  d["encoder"] = report.encoder;
  d["scoring"] = report.scoring;
  py::list per_template;
  for (const auto& [t, scores] : report.per_template) {
    py::dict row = scores_dict(scores);
    row["support"] = text::trim_blanks(t.support);
    row["attack"] = text::trim_blanks(t.attack);
    per_template.append(row);
  }
  d["templates"] = per_template;
  d["mean"] = scores_dict(report.mean);
  py::dict ablation_summary;
  for (const auto& [name, s] : report.ablation) {
    py::dict row;
    row["documents"] = s.documents;
    row["ris"] = py::make_tuple(s.ris.mean, s.ris.std);
    row["rcs"] = py::make_tuple(s.rcs.mean, s.rcs.std);
    row["di"] = py::make_tuple(s.di.mean, s.di.std);
    ablation_summary[py::str(name)] = row;
  }
  d["ablation"] = ablation_summary;
  return d;
}

// clean_corpus's defaults: the library's, from one default-constructed struct.
const retrieval::CleaningOptions kCleaningDefaults{};

py::list clean_corpus(const PyIndex& index, py::object trusted_texts, py::object out, std::optional<py::ssize_t> top,
                      std::optional<double> threshold, std::optional<double> alpha, py::ssize_t candidates, bool guard,
                      std::optional<double> sparsity_scale) {
  const std::vector<std::string> trusted = text_list(trusted_texts, "trusted");
  retrieval::CleaningOptions options;
  if (top && threshold) {
    throw py::value_error("give top or threshold, not both: threshold removes every candidate scoring at least it");
  }
  if (top) options.top = *top < 0 ? throw py::value_error("top must be >= 0") : std::size_t(*top);
  if (threshold) options.threshold = float(*threshold);
  if (alpha) options.alpha = float(*alpha);
  if (sparsity_scale) options.sparsity_scale = float(*sparsity_scale);
  options.candidates = positive(candidates, "candidates");
  options.identical_guard = guard;
  const std::string out_dir = optional_path(out, "out").value_or("");
  app::check_cleaning(options, out_dir);
  retrieval::CleaningReport report;
  {
    const ReleasedInterruptibly release;
    retrieval::Retriever retriever(index.documents, index.encoder, index.sparse_encoder);
    // The index's own passages, in slot order, are the corpus written.
    report = app::clean_corpus(retriever, trusted, out_dir.empty() ? std::vector<data::Document>{}
                                                                  : app::passages_of(*index.documents),
                               options, out_dir);
  }
  py::list removed;
  for (const retrieval::Removal& r : report.removed) {
    py::dict d;
    d["id"] = r.id;
    d["trusted"] = trusted[r.trusted];
    d["trusted_index"] = r.trusted;
    d["rank"] = r.rank;
    d["score"] = r.score;
    d["cosine"] = r.cosine;
    d["sparsity"] = r.sparsity;
    d["alpha"] = report.alpha.value;
    d["sparsity_scale"] = report.scale.value;
    removed.append(d);
  }
  return removed;
}

const char* const kCleanCorpusDoc = R"(Corpus cleaning with contradiction retrieval: the passages of `index` that contradict a
trusted text, found by cos + alpha * sparsity with each trusted text as the query.

Arguments:
    index: an Index built with a sparse_encoder.
    trusted: list of str, the texts taken as true. A passage whose text is one of them is never
        removed.
    out: a new (or empty) directory: corpus.jsonl receives the index's passages that were not
        removed (slot order), report.jsonl one line per removal. None writes nothing.
    top: passages removed per trusted text (the SparseCL paper removes 3); None = the library's
        default (CleaningOptions.top).
    threshold: instead of top (not with it), remove every candidate whose score is at least this.
    alpha: the sparsity weight; None = the one the sparse encoder records (else 1.0).
    candidates: stage-1 candidates per trusted text (K).
    guard: SparseCL's identical-pair guard.
    sparsity_scale: the magnitude gate tau (as Index.search's); None = the one the sparse
        encoder records, else none.

Returns:
    list of dict, one per removed passage in order of discovery: id, trusted (the text that
    removed it), trusted_index, rank among that text's hits, score, cosine, sparsity, alpha,
    sparsity_scale.

Raises:
    ValueError for no trusted texts, top 0 without a threshold, an index without Es, an out
    directory that exists and is not empty. The GIL is released while searching.)";

}  // namespace

void register_app(py::module_& m) {
  const app::BeirRunOptions run_defaults;
  const app::StanceRunOptions stance_defaults;
  const retrieval::SearchOptions& run_search = run_defaults.search;
  m.def("run_beir", &beir_run, py::arg("dataset"), py::arg("qrels"), py::kw_only(),
        py::arg("model") = run_defaults.model, py::arg("sparse_model") = py::none(), py::arg("verifier") = py::none(),
        py::arg("scorer") = retrieval::to_string(run_search.scorer), py::arg("alpha") = py::none(),
        py::arg("k") = py::none(), py::arg("candidates") = run_search.candidates,
        py::arg("metrics") = run_defaults.metrics, py::arg("tune_alpha") = py::none(),
        py::arg("index_cache") = py::none(), py::arg("out") = py::none(), py::arg("keep_self") = run_defaults.keep_self,
        py::arg("prefix") = py::none(), py::arg("stage1") = retrieval::to_string(run_search.stage1),
        py::arg("fusion") = retrieval::to_string(run_search.fusion), py::arg("fusion_lambda") = run_search.fusion_lambda,
        py::arg("rrf_k") = run_search.rrf_k, py::arg("threads") = run_defaults.threads,
        py::arg("sparsity_scale") = py::none(), py::arg("stance") = retrieval::to_string(run_search.stance),
        py::arg("guard") = run_search.sparsity.identical_guard, py::arg("ef_search") = run_search.dense_params.ef_search,
        py::arg("nprobe") = run_search.dense_params.nprobe, py::arg("feature_cache") = run_defaults.feature_cache,
        py::arg("progress") = false,
        R"(One retrieval configuration on a BEIR dataset against an explicit qrels file, as
`counterpoint run` runs it: only the judged queries, a query's own id removed (unless
keep_self), alpha tuned on these qrels first when tune_alpha is "interval", "reference" or "grid".
Every option is checked before a model loads.

Arguments:
    dataset: a BEIR folder (corpus.jsonl, queries.jsonl); qrels: a judgements file.
    model, sparse_model: E and Es (names or folders); scorer: "cosine", "hoyer", "l2l1",
        "kappa4", ...; alpha: None = the alpha Es records; sparsity_scale: the magnitude gate
        tau (Index.search's), None = the one Es records.
    k: hits per query; None = the deepest cut-off the metrics need.
    candidates: stage-1 candidates per query; left at the default, k when k is larger.
    index_cache: a folder to reuse the corpus index from, or to save it to.
    out: a TREC run file to write.
    verifier, stage1, fusion, fusion_lambda, rrf_k, stance, guard, ef_search, nprobe: as in
        Index.search (ef_search / nprobe apply to an index_cache built as hnsw / ivf).
    feature_cache: the folder keeping the network's pooled features of the corpus; None = none.

Returns:
    dict(queries, k, scoring, alpha=dict(value, description), sparsity_scale, metrics={name: mean},
    alpha_curve=[(alpha, nDCG@10), ...] when tuned).)");
  m.def("run_stance", &stance_run, py::arg("dataset"), py::arg("qrels"), py::kw_only(),
        py::arg("model") = stance_defaults.model, py::arg("templates") = app::to_string(stance_defaults.templates),
        py::arg("stage1") = retrieval::to_string(stance_defaults.search.stage1),
        py::arg("fusion") = retrieval::to_string(stance_defaults.search.fusion),
        py::arg("fusion_lambda") = stance_defaults.search.fusion_lambda, py::arg("rrf_k") = stance_defaults.search.rrf_k,
        py::arg("candidates") = stance_defaults.search.candidates, py::arg("index_cache") = py::none(),
        py::arg("ablation") = stance_defaults.ablation, py::arg("threads") = stance_defaults.threads,
        py::arg("sparse_model") = py::none(), py::arg("scorer") = retrieval::to_string(stance_defaults.search.scorer),
        py::arg("alpha") = py::none(), py::arg("sparsity_scale") = py::none(),
        py::arg("feature_cache") = stance_defaults.feature_cache, py::arg("progress") = false,
        R"(Stance-aware retrieval evaluated as `counterpoint stance` does: per instruction template
(held-out or training) P@R, Hard@R, Semi@R, Easy@R and nDCG@10, their mean, and with ablation=N
the word-ablation diagnostics RIS / RCS / DI (mean, std) per document class. With sparse_model
(Es) and a sparsity scorer ("hoyer", "l2l1", "kappa4"), the stance stage: each query's instruction
signs the sparsity term, cos + alpha * sparsity(Es(topic) - Es(claim)) for attack, minus for support.
sparsity_scale is the magnitude gate tau (Index.search's); feature_cache the folder keeping the
network's pooled features of the corpus (None = none); the other settings are Index.search's.

Returns:
    dict(queries, encoder, scoring, templates=[dict(support, attack, p@r, hard@r, ...)], mean=dict(...),
    ablation={class: dict(documents, ris, rcs, di)}).)");
  m.def("clean_corpus", &clean_corpus, py::arg("index"), py::arg("trusted"), py::kw_only(), py::arg("out") = py::none(),
        py::arg("top") = py::none(), py::arg("threshold") = py::none(), py::arg("alpha") = py::none(),
        py::arg("candidates") = kCleaningDefaults.candidates, py::arg("guard") = kCleaningDefaults.identical_guard,
        py::arg("sparsity_scale") = py::none(),
        kCleanCorpusDoc);
}

}  // namespace counterpoint::python
