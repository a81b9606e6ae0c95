// `counterpoint demo`: the main job. Contradiction retrieval on a small BEIR-layout corpus
// (app::run_demo), showing for each query the top hits under cosine alone and under
// cos + alpha * Hoyer with the default sparse-aware encoder, so a reader sees which passage each
// score prefers and why.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "counterpoint/app/demo.h"

namespace counterpoint::cli {

namespace {

void print_ranking(const char* title, const std::vector<retrieval::Hit>& hits, const app::DemoReport& report,
                   const std::string& query_id) {
  std::cout << "  " << title << "\n";
  for (std::size_t r = 0; r < hits.size(); ++r) {
    const auto& h = hits[r];
    std::cout << "    " << r + 1 << ". score " << std::fixed << std::setprecision(3) << std::setw(6) << h.score
              << " = cos " << h.cosine << " + alpha * hoyer " << h.sparsity << "  [" << h.id << "] "
              << report.index->text(h.slot) << (report.is_contradiction(query_id, h.id) ? "  <- contradiction" : "")
              << "\n";
  }
}

void print_report(const app::DemoReport& r) {
  std::cout << "counterpoint demo: " << r.passages << " passages, " << r.queries.size() << " queries; E = " << r.encoder
            << ", Es = " << r.sparse_encoder << ", " << r.alpha.describe() << "\n";
  if (const std::string gate = r.scale.describe(); !gate.empty()) {
    std::cout << "hoyer is gated by magnitude: Hoyer(d) * min(1, |d|_2 / scale), d = Es(q) - Es(p); " << gate
              << "\n";
  }
  std::cout << "\n";
  for (const auto& q : r.queries) {
    std::cout << "query [" << q.query.id << "] " << q.query.text << "\n";
    print_ranking("cosine only:", q.by_cosine, r, q.query.id);
    print_ranking("cos + alpha * Hoyer (contradiction search):", q.by_contradiction, r, q.query.id);
    if (q.why_first) {
      std::cout << "  why the first hit (" << q.by_contradiction[0].id << "):\n" << retrieval::describe(*q.why_first);
    }
    std::cout << "\n";
  }
  if (!r.qrels.empty()) {
    std::cout << "contradiction ranked first: cosine only " << r.first_by_cosine << "/" << r.queries.size()
              << ", cos + alpha * Hoyer " << r.first_by_contradiction << "/" << r.queries.size() << "\n";
  }
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto o = std::make_shared<app::DemoOptions>();
  o->models = default_models_dir();
  o->corpus = default_example_corpus();
  auto alpha = std::make_shared<float>(retrieval::kDefaultAlpha);
  auto* cmd = app.add_subcommand("demo", "Contradiction retrieval on the bundled example corpus");
  cmd->add_option("--models", o->models, "Directory of installed models")->check(CLI::ExistingDirectory);
  cmd->add_option("--corpus", o->corpus, "BEIR-layout corpus directory");
  cmd->add_option("--qrels", o->qrels, "Qrels marking contradictions (default: <corpus>/qrels/contradictions.tsv)");
  cmd->add_option("--model", o->model, "Dense encoder E");
  cmd->add_option("--sparse-model", o->sparse_model, "Sparse-aware encoder Es");
  auto* alpha_option = cmd->add_option("--alpha", *alpha, "Weight of the Hoyer term (default: the alpha Es records, else 1)")
                            ->default_str("");
  auto scale = std::make_shared<float>(0.0f);
  auto* scale_option = add_sparsity_scale_option(cmd, *scale);
  cmd->add_option("-k,--k", o->k, "Hits shown per ranking");
  cmd->add_option("--threads", o->threads, "Encoder threads (0 = all cores)");
  cmd->callback([o, alpha, alpha_option, scale, scale_option] {
    if (alpha_option->count()) o->alpha = *alpha;
    if (scale_option->count()) o->sparsity_scale = *scale;
    print_report(app::run_demo(*o));
  });
}

}  // namespace counterpoint::cli
