// counterpoint.run_beir and counterpoint.run_stance: the library's evaluation workflows (the
// ones `counterpoint run` and `counterpoint stance` print), returning their reports as dicts.
#include "bindings.h"
#include "counterpoint/app/beir_run.h"
#include "counterpoint/app/stance_run.h"
#include "counterpoint/text/words.h"

namespace counterpoint::python {

namespace {

py::dict alpha_dict(const retrieval::AlphaChoice& alpha) {
  py::dict d;
  d["value"] = alpha.value;
  d["description"] = alpha.describe();
  return d;
}

py::dict beir_run(py::handle dataset, py::handle qrels, py::handle model, py::handle sparse_model,
                  const std::string& scorer, std::optional<double> alpha, std::optional<std::size_t> k,
                  std::size_t candidates, std::vector<std::string> metrics, std::optional<std::string> tune_alpha,
                  py::handle index_cache, py::handle out, bool keep_self, std::optional<std::string> prefix,
                  const std::string& stage1, const std::string& fusion, double fusion_lambda, int threads,
                  std::optional<double> sparsity_scale, py::object progress) {
  app::BeirRunOptions o;
  o.dataset = path_argument(dataset, "dataset");
  o.qrels = path_argument(qrels, "qrels");
  o.model = path_argument(model, "model", kModelExpected);
  o.sparse_model = optional_path(sparse_model, "sparse_model", kModelExpected).value_or("");
  retrieval::set_scorer(o.search, scorer);
  if (alpha) o.search.alpha = float(*alpha);
  if (sparsity_scale) o.search.sparsity.scale = float(*sparsity_scale);
  o.k = k;
  o.search.candidates = candidates;
  o.metrics = std::move(metrics);
  if (tune_alpha) o.tune_alpha = eval::parse_alpha_search(*tune_alpha);
  if (auto cache = optional_path(index_cache, "index_cache")) o.index_cache = *cache;
  if (auto run_file = optional_path(out, "out")) o.out = *run_file;
  o.keep_self = keep_self;
  o.prefix = prefix;
  o.search.stage1 = retrieval::parse_stage1(stage1);
  o.search.fusion = retrieval::parse_fusion(fusion);
  o.search.fusion_lambda = float(fusion_lambda);
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
                    const std::string& stage1, const std::string& fusion, double fusion_lambda, std::size_t candidates,
                    py::handle index_cache, std::size_t ablation, int threads,
                    py::handle sparse_model, const std::string& scorer, std::optional<double> alpha,
                    py::object progress) {
  app::StanceRunOptions o;
  o.dataset = path_argument(dataset, "dataset");
  o.qrels = path_argument(qrels, "qrels");
  o.model = path_argument(model, "model", kModelExpected);
  o.sparse_model = optional_path(sparse_model, "sparse_model", kModelExpected).value_or("");
  retrieval::set_scorer(o.search, scorer);
  if (alpha) o.search.alpha = float(*alpha);
  o.templates = app::parse_stance_templates(templates);
  o.search.stage1 = retrieval::parse_stage1(stage1);
  o.search.fusion = retrieval::parse_fusion(fusion);
  o.search.fusion_lambda = float(fusion_lambda);
  o.search.candidates = candidates;
  if (auto cache = optional_path(index_cache, "index_cache")) o.index_cache = *cache;
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

}  // namespace

void register_app(py::module_& m) {
  const app::BeirRunOptions run_defaults;
  const app::StanceRunOptions stance_defaults;
  m.def("run_beir", &beir_run, py::arg("dataset"), py::arg("qrels"), py::kw_only(),
        py::arg("model") = run_defaults.model, py::arg("sparse_model") = py::none(),
        py::arg("scorer") = retrieval::to_string(run_defaults.search.scorer), py::arg("alpha") = py::none(),
        py::arg("k") = py::none(), py::arg("candidates") = run_defaults.search.candidates,
        py::arg("metrics") = run_defaults.metrics, py::arg("tune_alpha") = py::none(),
        py::arg("index_cache") = py::none(), py::arg("out") = py::none(), py::arg("keep_self") = run_defaults.keep_self,
        py::arg("prefix") = py::none(), py::arg("stage1") = retrieval::to_string(run_defaults.search.stage1),
        py::arg("fusion") = retrieval::to_string(run_defaults.search.fusion),
        py::arg("fusion_lambda") = run_defaults.search.fusion_lambda, py::arg("threads") = run_defaults.threads,
        py::arg("sparsity_scale") = py::none(), py::arg("progress") = false,
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

Returns:
    dict(queries, k, scoring, alpha=dict(value, description), sparsity_scale, metrics={name: mean},
    alpha_curve=[(alpha, nDCG@10), ...] when tuned).)");
  m.def("run_stance", &stance_run, py::arg("dataset"), py::arg("qrels"), py::kw_only(),
        py::arg("model") = stance_defaults.model, py::arg("templates") = app::to_string(stance_defaults.templates),
        py::arg("stage1") = retrieval::to_string(stance_defaults.search.stage1),
        py::arg("fusion") = retrieval::to_string(stance_defaults.search.fusion),
        py::arg("fusion_lambda") = stance_defaults.search.fusion_lambda,
        py::arg("candidates") = stance_defaults.search.candidates, py::arg("index_cache") = py::none(),
        py::arg("ablation") = stance_defaults.ablation, py::arg("threads") = stance_defaults.threads,
        py::arg("sparse_model") = py::none(), py::arg("scorer") = retrieval::to_string(stance_defaults.search.scorer),
        py::arg("alpha") = py::none(), py::arg("progress") = false,
        R"(Stance-aware retrieval evaluated as `counterpoint stance` does: per instruction template
(held-out or training) P@R, Hard@R, Semi@R, Easy@R and nDCG@10, their mean, and with ablation=N
the word-ablation diagnostics RIS / RCS / DI (mean, std) per document class. With sparse_model
(Es) and a sparsity scorer ("hoyer", "l2l1", "kappa4"), the stance stage: each query's instruction
signs the sparsity term, cos + alpha * sparsity(Es(topic) - Es(claim)) for attack, minus for support.

Returns:
    dict(queries, encoder, scoring, templates=[dict(support, attack, p@r, hard@r, ...)], mean=dict(...),
    ablation={class: dict(documents, ris, rcs, di)}).)");
}

}  // namespace counterpoint::python
