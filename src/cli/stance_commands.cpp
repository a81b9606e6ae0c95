// `counterpoint stance`: stance-aware retrieval on a set labelled like IBM Debater Claim Stance
// (app::run_stance). Prints P@R, Hard@R, Semi@R, Easy@R and nDCG@10 per instruction template and
// their mean, and with --ablation the word-ablation diagnostics RIS / RCS / DI per document class.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "counterpoint/app/stance_run.h"
#include "counterpoint/text/words.h"

namespace counterpoint::cli {

namespace {

void print_scores(const std::string& label, const eval::StanceScores& s) {
  std::cout << std::left << std::setw(44) << label << std::right << std::fixed << std::setprecision(4)
            << std::setw(8) << s.precision_at_r << std::setw(9) << s.hard_at_r << std::setw(9) << s.semi_at_r
            << std::setw(9) << s.easy_at_r << std::setw(9) << s.ndcg_at_10 << "\n";
}

std::string cell(const eval::MeanStd& v) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(4) << v.mean << " (" << std::setprecision(4) << v.std << ")";
  return out.str();
}

void print_report(const app::StanceRunOptions& o, const std::string& stage1, const app::StanceRunReport& r) {
  std::cout << "queries " << r.queries << "  encoder " << r.encoder << "  stage1 " << stage1 << "  templates "
            << app::to_string(o.templates) << "\n";
  if (!o.sparse_model.empty()) std::cout << "stance stage: " << r.scoring << ", signed by each query's instruction\n";
  std::cout << std::left << std::setw(44) << "instruction (support / attack)" << std::right << std::setw(8) << "P@R"
            << std::setw(9) << "Hard@R" << std::setw(9) << "Semi@R" << std::setw(9) << "Easy@R" << std::setw(9)
            << "nDCG@10" << "\n";
  for (const auto& [t, scores] : r.per_template) print_scores("\"" + text::trim_blanks(t.support) + "\"", scores);
  print_scores("mean over templates", r.mean);
  if (o.ablation == 0) return;
  const auto& first = r.per_template.front().first;
  std::cout << "word ablation, instruction \"" << text::trim_blanks(first.support) << "\" / \"" << text::trim_blanks(first.attack)
            << "\", up to " << o.ablation << " documents per class per query\n";
  std::cout << std::left << std::setw(12) << "class" << std::right << std::setw(6) << "docs" << std::setw(18)
            << "RIS mean (std)" << std::setw(18) << "RCS mean (std)" << std::setw(20) << "DI mean (std)" << "\n";
  for (const auto& [name, s] : r.ablation) {
    std::cout << std::left << std::setw(12) << name << std::right << std::setw(6) << s.documents << std::setw(18)
              << cell(s.ris) << std::setw(18) << cell(s.rcs) << std::setw(20) << cell(s.di) << "\n";
  }
}

}  // namespace

void add_stance_command(CLI::App& app) {
  struct StanceArgs {
    app::StanceRunOptions options;
    SearchArgs search;
    std::string templates = app::to_string(app::StanceRunOptions{}.templates);
  };
  auto a = std::make_shared<StanceArgs>();
  auto* cmd = app.add_subcommand("stance", "Stance-aware retrieval: P@R, Hard@R, Semi@R, nDCG@10 and word ablation");
  cmd->add_option("--dataset", a->options.dataset, "BEIR directory with metadata.jsonl (topic_id, stance per claim)")
      ->required();
  cmd->add_option("--qrels", a->options.qrels, "Qrels file; only its queries are run")->required();
  cmd->add_option("--model", a->options.model, "Encoder E (name or directory)");
  cmd->add_option("--templates", a->templates, "Instruction templates: held-out (never trained on) or training");
  add_stage1_options(cmd, a->search, a->options.search);
  cmd->add_option("--sparse-model", a->options.sparse_model,
                  "Es for the stance stage: cos + alpha * sparsity(Es(topic) - Es(claim)) for attack queries, "
                  "minus for support ones (with --scorer hoyer, l2l1 or kappa4)");
  add_scorer_options(cmd, a->search, a->options.search, "cosine, or hoyer / l2l1 / kappa4 with --sparse-model");
  cmd->add_option("--index-cache", a->options.index_cache, "Index directory to reuse, or to create when absent");
  add_feature_cache_options(cmd, a->options.feature_cache);
  cmd->add_option("--ablation", a->options.ablation,
                  "Word ablation on up to N documents per class per query (first template)");
  cmd->add_option("--threads", a->options.threads, "Threads (0 = all cores)");
  cmd->callback([a] {
    a->options.templates = app::parse_stance_templates(a->templates);
    a->options.search = a->search.resolve();
    const auto report = app::run_stance(a->options, stderr_progress("encoding corpus"), stderr_progress("word ablation"));
    print_report(a->options, retrieval::to_string(a->options.search.stage1), report);
  });
}

}  // namespace counterpoint::cli
