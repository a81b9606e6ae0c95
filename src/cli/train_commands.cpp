// `counterpoint train sparsecl|contrastive`: fine-tune an encoder on triples built from a data
// set, write a model directory, and (with --dev-triples) tune alpha for cos(E) + alpha * Hoyer(Es)
// on a held-out retrieval task, recording alpha and the dev scores in the manifest. The run is
// the library's (training::train_from_source); this file binds its options and prints.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "counterpoint/training/trainer.h"
#include "counterpoint/training/triples.h"
#include "training_options.h"

namespace counterpoint::cli {

namespace {

struct TrainArgs {
  std::string base = kDefaultDenseModel;
  training::TripleSource source;
  training::TrainConfig config;
};

void add_source_options(CLI::App& cmd, training::TripleSource& s) {
  add_name_option(cmd, "--data", s.data, training::parse_triple_data, "tsv, arguana, sick or stance");
  cmd.add_option("--dataset", s.dataset, "BEIR dataset directory (arguana, sick, stance)");
  cmd.add_option("--qrels", s.qrels, "Qrels of the training split (arguana, stance)");
  cmd.add_option("--pairs", s.pairs, "SICK pairs_<split>.tsv");
  cmd.add_option("--triples", s.triple_files, "anchor<TAB>positive<TAB>negative[<TAB>group] files");
  cmd.add_option("--negatives", s.negatives_per_anchor, "Hard negatives per ArguAna anchor (same debate and side)");
  add_name_option(cmd, "--curriculum", s.curriculum, training::parse_stance_curriculum,
                  "Stance curriculum: homogeneous, mixed, inverted (mixed plus inverted positives as negatives) or "
                  "inverted-both (also inverted hard negatives as positives)");
  cmd.add_option("--stance-count", s.stance_count, "Stance triples to draw");
}

void add_model_options(CLI::App& cmd, training::TrainConfig& c) {
  cmd.add_option("--dev-triples", c.dev_triples, "Held-out triple files: tune alpha and record dev nDCG@10");
  cmd.add_option("--dense-model", c.dense_model, "E used with the trained Es when tuning alpha");
  cmd.add_option("--sparsity-scales", c.sparsity_scales,
                 "Magnitude gates tau tried when tuning alpha (sparsity * min(1, |Es(q) - Es(p)|_2 / tau)); the best "
                 "is recorded beside alpha; default 0 alone = no gate; e.g. 0,0.1,0.2,0.3")
      ->delimiter(',');
  cmd.add_option("--feature-cache", c.feature_cache,
                 "With --head-only: a folder of pooled features to reuse and fill (as run --feature-cache), so head "
                 "variants on one corpus need no forward pass");
  cmd.add_option("--name", c.model_name, "Model name in the manifest");
  cmd.add_option("--temperature", c.temperature, "InfoNCE temperature");
  cmd.add_option("--hard-negative-weight", c.hard_negative_weight, "Extra weight on the hard negatives (SparseCL)");
  add_name_option(cmd, "--sparsity", c.sparsity, scoring::parse_sparsity,
                  "hoyer, l2l1 or kappa4 (the SparseCL loss; the alpha tuning's sparsity for both losses)");
  cmd.add_option_function<std::string>(
      "--prefix", [&c](const std::string& prefix) { c.query_prefix = prefix; },
      "Anchor prefix in training and search (Prompt+CL: 'Not true: ')");
  cmd.add_flag_callback(
      "--head-only", [&c] { c.trained_weights = training::TrainedWeights::kHead; },
      "Train only a head on the pooled embedding (--head-kind); the network stays frozen and each text is encoded once");
  add_name_option(cmd, "--head-kind", c.head_kind, parse_head_kind,
                  "With --head-only: linear, or mlp (a residual two-layer MLP, W f + W2 gelu(W1 f + b1) + b2)");
  cmd.add_option("--head-hidden", c.head_hidden, "Hidden units of a new mlp head (a base model's own head keeps its width)");
  cmd.add_option("--frozen-layers", c.frozen_layers,
                 "Partial fine-tuning: keep the token embeddings and this many bottom layers as they are; only the "
                 "layers above learn (0 = the whole network)");
}

void print_alpha_tuning(const eval::TaskAlphaTuning& tuning, scoring::Sparsity sparsity) {
  std::cout << "dev (" << tuning.queries << " queries, " << tuning.documents << " passages): nDCG@10 cosine "
            << std::setprecision(4) << tuning.cosine_ndcg << ", cos + alpha * " << scoring::to_string(sparsity)
            << " " << tuning.tuned.best_score << " at alpha " << tuning.tuned.best_alpha;
  if (tuning.scale_curve.size() > 1) {
    std::cout << ", scale " << tuning.scale << " (of";
    for (const auto& p : tuning.scale_curve) std::cout << " " << p.scale << ": " << p.score;
    std::cout << ")";
  }
  std::cout << "\n";
}

}  // namespace

void add_train_commands(CLI::App& app) {
  auto* train = app.add_subcommand("train", "Fine-tune an encoder (SparseCL or contrastive) or train a map verifier");
  train->require_subcommand(1);
  add_train_verifier_command(*train);
  for (const auto loss : {training::LossKind::kSparseCL, training::LossKind::kContrastive}) {
    auto a = std::make_shared<TrainArgs>();
    a->config.loss = loss;
    auto* cmd = train->add_subcommand(training::to_string(loss),
                                      loss == training::LossKind::kSparseCL
                                          ? "SparseCL: InfoNCE over sparsity of embedding differences"
                                          : "Cosine InfoNCE / multiple negatives ranking loss");
    cmd->add_option("--base", a->base, "Model to fine-tune (name or directory)");
    add_source_options(*cmd, a->source);
    add_model_options(*cmd, a->config);
    add_optimizer_options(*cmd, a->config);
    add_loop_options(*cmd, a->config, "Model directory to write");
    cmd->callback([a] {
      training::TrainConfig& config = a->config;
      a->source.seed = config.seed;  // one --seed: data order, sampling and initialisation
      training::validate(a->base, config);  // before the message below, which announces work
      if (config.trained_weights == training::TrainedWeights::kHead) {
        std::cerr << "head only: encoding every distinct text once with the frozen network first\n";
      }
      const auto report = training::train_from_source(a->base, a->source, config, train_progress());
      print_run_end(report);
      std::cout << "trained " << report.steps << " steps on " << report.triples << " triples, final loss "
                << report.final_loss << ", " << std::fixed << std::setprecision(1) << report.examples_per_second
                << " triples/s -> " << report.output_dir << "\n";
      if (report.alpha_tuning) print_alpha_tuning(*report.alpha_tuning, config.sparsity);
    });
  }
}

}  // namespace counterpoint::cli
