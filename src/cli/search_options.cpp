#include "commands.h"

namespace counterpoint::cli {

void add_stage1_options(CLI::App* cmd, SearchArgs& a, const retrieval::SearchOptions& defaults) {
  a.defaults = defaults;
  a.stage1 = retrieval::to_string(defaults.stage1);
  a.fusion = retrieval::to_string(defaults.fusion);
  a.lambda = defaults.fusion_lambda;
  a.candidates = defaults.candidates;
  cmd->add_option("--stage1", a.stage1, "dense, bm25 or hybrid");
  cmd->add_option("--fusion", a.fusion, "rsf or rrf (hybrid stage 1)");
  cmd->add_option("--lambda", a.lambda, "RSF weight of BM25");
  a.candidates_option =
      cmd->add_option("--candidates", a.candidates, "Stage-1 candidates K (when not given and k is larger: k)");
}

void add_scorer_options(CLI::App* cmd, SearchArgs& a, const retrieval::SearchOptions& defaults,
                        const std::string& scorers) {
  a.defaults = defaults;
  a.scorer = retrieval::to_string(defaults.scorer);
  cmd->add_option("--scorer", a.scorer, scorers);
  a.alpha_option = cmd->add_option("--alpha", a.alpha, "Weight of the sparsity term (default: the alpha Es records, else 1)")
                       ->default_str("");
  a.scale_option = add_sparsity_scale_option(cmd, a.scale);
}

CLI::Option* add_sparsity_scale_option(CLI::App* cmd, float& scale) {
  return cmd
      ->add_option("--sparsity-scale", scale,
                   "Magnitude gate tau of the sparsity term: sparsity * min(1, |Es(q) - Es(p)|_2 / tau); "
                   "0 = none (default: the tau Es records, else none)")
      ->default_str("");
}

void add_search_options(CLI::App* cmd, SearchArgs& a, const retrieval::SearchOptions& defaults) {
  add_stage1_options(cmd, a, defaults);
  add_scorer_options(cmd, a, defaults, "cosine, hoyer, l2l1, kappa4, mean, maxsim, alignment, verifier");
  a.k = defaults.k;
  a.stance = retrieval::to_string(defaults.stance);
  a.stance_option = cmd->add_option("--stance", a.stance,
                  "The stance hits take towards each query, the sign of the sparsity term: attack (+), support (-), "
                  "or from-query (each query's instruction, e.g. \"Find an argument supporting the claim: ...\"; "
                  "attack without one)");
  a.k_option = cmd->add_option("-k,--k", a.k, "Hits per query (run: default and minimum, the deepest cut-off of --metrics)");
  cmd->add_option("--ef-search", a.ef_search, "HNSW efSearch for this call");
  cmd->add_option("--nprobe", a.nprobe, "IVF nprobe for this call");
  cmd->add_flag("--no-guard", a.no_guard, "Disable the near-identical guard of the sparsity term");
}

retrieval::SearchOptions SearchArgs::resolve() const {
  retrieval::SearchOptions o = defaults;
  if (k_option) o.k = k;
  o.candidates =
      candidates_option && candidates_option->count() ? candidates : retrieval::default_candidates(o.k, candidates);
  if (!scorer.empty()) retrieval::set_scorer(o, scorer);
  if (alpha_option && alpha_option->count()) o.alpha = alpha;
  if (scale_option && scale_option->count()) o.sparsity.scale = scale;
  o.stage1 = retrieval::parse_stage1(stage1);
  o.fusion = retrieval::parse_fusion(fusion);
  o.fusion_lambda = lambda;
  o.sparsity.identical_guard = !no_guard;
  if (stance_option && stance_option->count()) o.stance = retrieval::parse_stance(stance);
  o.dense_params.ef_search = ef_search;
  o.dense_params.nprobe = nprobe;
  return o;
}

void add_feature_cache_options(CLI::App* cmd, std::string& folder) {
  cmd->add_option("--feature-cache", folder,
                  "Folder keeping the network's pooled features of every text encoded, so a corpus goes through a "
                  "network once (E and every head Es over it reuse them)");
  cmd->add_flag_callback("--no-feature-cache", [&folder] { folder.clear(); }, "Encode everything afresh, keep nothing");
}

std::vector<std::string> query_ids(const std::vector<data::Query>& queries) {
  std::vector<std::string> ids;
  for (const auto& q : queries) ids.push_back(q.id);
  return ids;
}

}  // namespace counterpoint::cli
