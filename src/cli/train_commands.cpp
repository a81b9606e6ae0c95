// `counterpoint train sparsecl|contrastive`: fine-tune an encoder on triples built from a data
// set, write a model directory, and (with --dev-triples) tune alpha for cos(E) + alpha * Hoyer(Es)
// on a held-out retrieval task, recording alpha and the dev scores in the manifest.
#include <iomanip>
#include <iostream>
#include <map>

#include "commands.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/eval/alpha_search.h"
#include "counterpoint/eval/metrics.h"
#include "counterpoint/retrieval/retriever.h"
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

std::vector<training::Triple> load_triple_files(const std::vector<std::string>& paths) {
  std::vector<training::Triple> all;
  for (const auto& path : paths) {
    auto part = training::load_tsv_triples(path);
    all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return all;
}

std::vector<training::Triple> build_triples(const TrainArgs& a) {
  const auto need = [](const std::string& value, const char* flag) {
    if (value.empty()) throw InvalidArgument(std::string("this --data source needs ") + flag);
  };
  if (a.data == "tsv") {
    if (a.triples.empty()) throw InvalidArgument("--data tsv needs --triples FILE [FILE ...]");
    return load_triple_files(a.triples);
  }
  if (a.data == "arguana") {
    need(a.dataset, "--dataset");
    need(a.qrels, "--qrels");
    training::ArguAnaTripleOptions options;
    options.negatives_per_anchor = a.negatives;
    options.seed = a.seed;
    return training::arguana_triples(a.dataset, a.qrels, join_path(a.dataset, "metadata.jsonl"), options);
  }
  if (a.data == "sick") {
    need(a.pairs, "--pairs");
    need(a.dataset, "--dataset");
    return training::sick_triples(a.pairs, join_path(a.dataset, "corpus.jsonl"), a.seed);
  }
  if (a.data == "stance") {
    need(a.dataset, "--dataset");
    need(a.qrels, "--qrels");
    training::StanceTripleOptions options;
    options.curriculum = training::parse_stance_curriculum(a.curriculum);
    options.count = a.stance_count;
    options.seed = a.seed;
    return training::claim_stance_triples(a.dataset, a.qrels, join_path(a.dataset, "metadata.jsonl"), options);
  }
  throw InvalidArgument("unknown --data '" + a.data + "' (expected tsv, arguana, sick or stance)");
}

// A retrieval task made of held-out triples: each anchor is a query whose relevant passage is
// its positive (the contradiction); every positive and negative is in the corpus.
struct DevTask {
  std::vector<std::string> doc_ids, doc_texts, query_ids, query_texts;
  data::Qrels qrels;
};

DevTask dev_task(const std::vector<training::Triple>& triples) {
  DevTask task;
  std::map<std::string, std::string> id_of;
  const auto add_doc = [&](const std::string& text) {
    auto [it, fresh] = id_of.emplace(text, "d" + std::to_string(id_of.size()));
    if (fresh) {
      task.doc_ids.push_back(it->second);
      task.doc_texts.push_back(text);
    }
    return it->second;
  };
  for (std::size_t i = 0; i < triples.size(); ++i) {
    const std::string qid = "q" + std::to_string(i);
    task.query_ids.push_back(qid);
    task.query_texts.push_back(triples[i].anchor);
    task.qrels[qid][add_doc(triples[i].positive)] = 1;
    for (const auto& n : triples[i].negatives) add_doc(n);
  }
  return task;
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
    cmd->add_option("--curriculum", a->curriculum, "Stance curriculum: homogeneous or mixed");
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
      const auto triples = build_triples(*a);
      std::cerr << "training on " << triples.size() << " triples\n";
      training::TrainConfig config;
      config.loss = training::parse_loss_kind(a->loss);
      config.sparsity = training::parse_sparsity_kind(a->sparsity);
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
      const DevTask task = dev_task(load_triple_files(a->dev_triples));
      auto dense = load_encoder(a->dense_model, a->threads);
      auto sparse = Encoder::load(a->out, EncoderConfig{a->threads});
      auto idx = std::make_shared<index::DocumentIndex>(retrieval::index_options_for(*dense, sparse.get()));
      retrieval::add_documents(*idx, task.doc_ids, task.doc_texts, *dense, sparse.get());
      retrieval::Retriever retriever(idx, dense, sparse);
      retrieval::SearchOptions search;
      search.scorer = retrieval::Scorer::kSparsity;
      search.candidates = std::min<std::size_t>(100, task.doc_ids.size());
      const auto encoded = retriever.encode_queries(task.query_texts, search);
      const auto ndcg = [&](double alpha) {
        auto o = search;
        o.alpha = float(alpha);
        if (alpha == 0.0) o.scorer = retrieval::Scorer::kCosine;
        return eval::evaluate(ranked_run(task.query_ids, retriever.search_encoded(encoded, o)), task.qrels, {"ndcg@10"})
            .mean.at("ndcg@10");
      };
      const double cosine_only = ndcg(0.0);
      const auto tuned = eval::tune_alpha(ndcg);
      std::cout << "dev (" << task.query_ids.size() << " queries, " << task.doc_ids.size()
                << " passages): nDCG@10 cosine " << std::setprecision(4) << cosine_only << ", cos + alpha * "
                << a->sparsity << " " << tuned.best_score << " at alpha " << tuned.best_alpha << "\n";
      ModelManifest manifest = ModelManifest::load(a->out);
      manifest.training["alpha"] = tuned.best_alpha;
      manifest.training["alpha_search"] =
          "best point of the interval search [0, 10], 10 bins, to width 0.01 (REFERENCE.md)";
      manifest.training["alpha_reference_left_edge"] = tuned.reference_alpha;
      manifest.training["dev"] = {{"triples", a->dev_triples},
                                  {"dense_model", dense->manifest().name},
                                  {"ndcg@10_cosine", cosine_only},
                                  {"ndcg@10_cosine_plus_sparsity", tuned.best_score}};
      manifest.save(a->out);
    });
  }
}

}  // namespace counterpoint::cli
