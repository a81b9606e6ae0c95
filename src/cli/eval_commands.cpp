// `counterpoint eval`: metrics of a TREC run against a qrels file.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "counterpoint/data/run.h"
#include "counterpoint/eval/metrics.h"

namespace counterpoint::cli {

void add_eval_commands(CLI::App& app) {
  struct Args {
    std::string qrels, run, metrics = "ndcg@10,recall@100,mrr@10,acc@1,p@r";
    bool keep_self = false, per_query = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("eval", "Score a TREC run against qrels");
  cmd->add_option("--qrels", a->qrels, "Qrels file (BEIR TSV, 3- or 4-column)")->required();
  cmd->add_option("--run", a->run, "TREC run file")->required();
  cmd->add_option("--metrics", a->metrics, "Comma-separated metrics");
  cmd->add_flag("--keep-self", a->keep_self, "Keep a query's own id in its ranking");
  cmd->add_flag("--per-query", a->per_query, "Print every query's values too");
  cmd->callback([a] {
    std::vector<std::string> metrics;
    std::stringstream ms(a->metrics);
    for (std::string m; std::getline(ms, m, ',');) if (!m.empty()) metrics.push_back(m);
    eval::EvalOptions options;
    options.exclude_self = !a->keep_self;
    const auto result = eval::evaluate(data::read_trec_run(a->run), data::load_qrels(a->qrels), metrics, options);
    if (const std::string unranked = eval::describe_unranked(result); !unranked.empty()) {
      std::cerr << "warning: " << unranked << "\n";
    }
    if (a->per_query) {
      for (const auto& [qid, values] : result.per_query) {
        for (const auto& [name, v] : values) std::cout << name << "\t" << qid << "\t" << std::fixed << std::setprecision(4) << v << "\n";
      }
    }
    std::cout << "queries\t" << result.per_query.size() << "\n";
    for (const auto& [name, v] : result.mean) std::cout << name << "\tall\t" << std::fixed << std::setprecision(4) << v << "\n";
  });
}

}  // namespace counterpoint::cli
