// `counterpoint train sparsecl|contrastive`: fine-tune an encoder on triples built from a data
// set, write a model directory, and (with --dev-triples) tune alpha for cos(E) + alpha * Hoyer(Es)
// on a held-out retrieval task, recording alpha and the dev scores in the manifest.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/eval/retrieval_task.h"
#include "counterpoint/training/trainer.h"
#include "counterpoint/training/triples.h"

namespace counterpoint::cli {

namespace {

struct TrainArgs {
  std::string loss, base = kDefaultDenseModel, dense_model = kDefaultDenseModel, data = "tsv", dataset, qrels, pairs, out,
              name, prefix, sparsity = "hoyer", curriculum = "mixed";
  std::vector<std::string> triples, dev_triples;
  // Defaults from the one home of training defaults, the C++ config (Python reads the same).
  std::size_t epochs = training::TrainConfig{}.epochs, batch = training::TrainConfig{}.batch_size, max_steps = 0,
              stance_count = 2000, negatives = 1;
  double lr = training::TrainConfig{}.learning_rate, temperature = training::TrainConfig{}.temperature,
         weight_decay = training::TrainConfig{}.weight_decay, warmup = training::TrainConfig{}.warmup_ratio,
         hard_weight = training::TrainConfig{}.hard_negative_weight;
  std::uint64_t seed = training::TrainConfig{}.seed;
  int threads = 0;
  bool has_prefix = false, head_only = false;
  CheckpointArgs checkpoint;
};

training::TripleSource triple_source(const TrainArgs& a) {
  training::TripleSource source;
  source.data = training::parse_triple_data(a.data);
  source.triple_files = a.triples;
  source.dataset = a.dataset;
  source.qrels = a.qrels;
  source.pairs = a.pairs;
  source.negatives_per_anchor = a.negatives;
  source.curriculum = training::parse_stance_curriculum(a.curriculum);
  source.stance_count = a.stance_count;
  source.seed = a.seed;
  return source;
}

}  // namespace

void add_train_commands(CLI::App& app) {
  auto* train = app.add_subcommand("train", "Fine-tune an encoder (SparseCL or contrastive) or train a map verifier");
  train->require_subcommand(1);
  add_train_verifier_command(*train);
  for (const char* loss : {"sparsecl", "contrastive"}) {
    auto a = std::make_shared<TrainArgs>();
    a->loss = loss;
    auto* cmd = train->add_subcommand(loss, std::string(loss) == "sparsecl"
                                                ? "SparseCL: InfoNCE over sparsity of embedding differences"
                                                : "Cosine InfoNCE / multiple negatives ranking loss");
    cmd->add_option("--base", a->base, "Model to fine-tune (name or directory)");
    cmd->add_option("--data", a->data, "tsv, arguana, sick or stance");
    cmd->add_option("--dataset", a->dataset, "BEIR dataset directory (arguana, sick, stance)");
    cmd->add_option("--qrels", a->qrels, "Qrels of the training split (arguana, stance)");
    cmd->add_option("--pairs", a->pairs, "SICK pairs_<split>.tsv");
    cmd->add_option("--triples", a->triples, "anchor<TAB>positive<TAB>negative[<TAB>group] files");
    cmd->add_option("--negatives", a->negatives, "Hard negatives per ArguAna anchor (same debate and side)");
    cmd->add_option("--curriculum", a->curriculum, "Stance curriculum: homogeneous, mixed or inverted (mixed plus inverted positives as negatives)");
    cmd->add_option("--stance-count", a->stance_count, "Stance triples to draw");
    cmd->add_option("--dev-triples", a->dev_triples, "Held-out triple files: tune alpha and record dev nDCG@10");
    cmd->add_option("--dense-model", a->dense_model, "E used with the trained Es when tuning alpha");
    cmd->add_option("--out", a->out, "Model directory to write")->required();
    cmd->add_option("--name", a->name, "Model name in the manifest");
    cmd->add_option("--epochs", a->epochs, "Epochs");
    cmd->add_option("--batch-size", a->batch, "Triples per batch (in-batch negatives)");
    cmd->add_option("--max-steps", a->max_steps, "Stop after this many steps (0 = all epochs)");
    cmd->add_option("--lr", a->lr, "AdamW learning rate");
    cmd->add_option("--weight-decay", a->weight_decay, "AdamW weight decay");
    cmd->add_option("--warmup", a->warmup, "Share of steps with linear warm-up");
    cmd->add_option("--temperature", a->temperature, "InfoNCE temperature");
    cmd->add_option("--hard-negative-weight", a->hard_weight, "Extra weight on the hard negatives (SparseCL)");
    cmd->add_option("--sparsity", a->sparsity, "hoyer, l2l1 or kappa4 (SparseCL)");
    cmd->add_option("--prefix", a->prefix, "Anchor prefix in training and search (Prompt+CL: 'Not true: ')")
        ->each([a](const std::string&) { a->has_prefix = true; });
    cmd->add_option("--seed", a->seed, "Seed of data order and initialisation");
    cmd->add_option("--threads", a->threads, "Threads (0 = all cores)");
    add_checkpoint_options(*cmd, a->checkpoint);
    cmd->add_flag("--head-only", a->head_only,
                  "Train only a linear head on the pooled embedding; the network stays frozen and each text is "
                  "encoded once");
    cmd->callback([a] {
      const auto triples = training::build_triples(triple_source(*a));
      std::cerr << "training on " << triples.size() << " triples\n";
      training::TrainConfig config;
      config.loss = training::parse_loss_kind(a->loss);
      config.sparsity = scoring::parse_sparsity(a->sparsity);
      if (a->head_only) {
        config.trained_weights = training::TrainedWeights::kHead;
        std::cerr << "head only: encoding every distinct text once with the frozen network first\n";
      }
      config.temperature = a->temperature;
      config.hard_negative_weight = a->hard_weight;
      config.epochs = a->epochs;
      config.batch_size = a->batch;
      config.max_steps = a->max_steps;
      config.learning_rate = a->lr;
      config.weight_decay = a->weight_decay;
      config.warmup_ratio = a->warmup;
      config.seed = a->seed;
      config.threads = a->threads;
      config.output_dir = a->out;
      config.checkpoint_every = a->checkpoint.every;
      config.resume = !a->checkpoint.fresh;
      config.model_name = a->name;
      config.data_description = a->data;
      for (const auto& file : a->triples) config.data_description += ":" + file;
      if (!a->dataset.empty()) config.data_description += ":" + a->dataset;
      if (a->has_prefix) config.query_prefix = a->prefix;
      const auto report = training::train(resolve_model(a->base), triples, config,
                                          [](const training::TrainProgress& p) {
                                            std::cerr << "\r" << training::format_progress(p) << std::flush;
                                            return true;
                                          });
      std::cerr << "\n";
      print_resumed(report.resumed_from);
      std::cout << "trained " << report.steps << " steps, final loss " << report.final_loss << ", "
                << std::fixed << std::setprecision(1) << report.examples_per_second << " triples/s -> "
                << report.output_dir << "\n";
      if (a->dev_triples.empty()) return;

      // Alpha on held-out triples, recorded in the new model's manifest.
      auto dense = load_encoder(a->dense_model, a->threads);
      auto sparse = Encoder::load(a->out, EncoderConfig{a->threads});
      const eval::AlphaSearch search;
      const auto tuning = eval::tune_alpha_on_task(training::dev_task(training::load_tsv_triples(a->dev_triples)),
                                                   dense, sparse, config.sparsity, search);
      std::cout << "dev (" << tuning.queries << " queries, " << tuning.documents
                << " passages): nDCG@10 cosine " << std::setprecision(4) << tuning.cosine_ndcg << ", cos + alpha * "
                << a->sparsity << " " << tuning.tuned.best_score << " at alpha " << tuning.tuned.best_alpha << "\n";
      eval::record_tuned_alpha(a->out, tuning, search,
                               {{"triples", a->dev_triples}, {"dense_model", dense->manifest().name}});
    });
  }
}

}  // namespace counterpoint::cli
