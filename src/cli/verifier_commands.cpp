// `counterpoint train verifier`: train a built-in map verifier (F3 CNN or F4 patch Transformer)
// on SICK near-miss triples, with the encoder frozen or trained end to end. `counterpoint near-miss`: how well the fixed
// token-map scores (F0 mean, F1 MaxSim, F2 alignment) and any verifiers separate paraphrases
// from near-misses on a SICK pairs file.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/scoring/token_maps.h"
#include "counterpoint/training/near_miss.h"
#include "counterpoint/training/verifier_trainer.h"

namespace counterpoint::cli {

namespace {

training::MapScorer reduction(float (*score)(MatrixView)) {
  return [score](const std::vector<Matrix>& maps) {
    std::vector<float> out;
    for (const auto& m : maps) out.push_back(score(m.view()));
    return out;
  };
}

float alignment_with_defaults(MatrixView map) { return scoring::map_alignment(map); }

void print_near_miss_row(const std::string& scorer, const training::NearMissReport& r) {
  const auto mean = [](const std::vector<float>& v) {
    double sum = 0;
    for (float x : v) sum += x;
    return sum / double(v.size());
  };
  std::cout << std::left << std::setw(28) << scorer << std::right << std::fixed << std::setprecision(4)
            << std::setw(8) << r.auc << std::setw(12) << mean(r.paraphrase_scores) << std::setw(12)
            << mean(r.near_miss_scores) << "\n";
}

}  // namespace

void add_train_verifier_command(CLI::App& train) {
  struct Args {
    std::string model = kDefaultDenseModel, pairs, dev_pairs, out, architecture = "cnn", inverted_edits;
    bool inverted_negatives = false;
    // Defaults from the C++ config, as Python's train_verifier reads them.
    double min_overlap = 0.5, lr = training::VerifierTrainConfig{}.learning_rate,
           temperature = training::VerifierTrainConfig{}.temperature,
           weight_decay = training::VerifierTrainConfig{}.weight_decay,
           warmup = training::VerifierTrainConfig{}.warmup_ratio, dropout = 0.1, encoder_lr = 0.0;
    std::size_t epochs = training::VerifierTrainConfig{}.epochs, batch = training::VerifierTrainConfig{}.batch_size,
                patience = 0;
    CheckpointArgs checkpoint;
    int map_size = scoring::VerifierShape{}.map_size, width = scoring::VerifierShape{}.width, patch = 8,
        feed_forward = 32, threads = 0;
    std::uint64_t seed = training::VerifierTrainConfig{}.seed;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = train.add_subcommand("verifier", "Train a map verifier (F3 cnn, F4 transformer) on SICK near-misses");
  cmd->add_option("--model", a->model, "Encoder whose token vectors make the maps (name or directory)");
  cmd->add_option("--encoder-lr", a->encoder_lr,
                  "> 0: train a copy of the encoder end to end at this learning rate (reference ~1.5e-5), written "
                  "to OUT/encoder; 0 = frozen encoder");
  cmd->add_option("--pairs", a->pairs, "SICK pairs_<split>.tsv to build training triples from")->required();
  cmd->add_option("--dev-pairs", a->dev_pairs, "SICK pairs file for the per-epoch near-miss AUC (best epoch kept)");
  cmd->add_option("--min-overlap", a->min_overlap, "Word overlap a contradiction needs to count as a near-miss");
  cmd->add_flag("--inverted-negatives", a->inverted_negatives,
                "Also train on structure-targeted negatives: each anchor's minimal edit (role swap, negation, "
                "antonym; see `counterpoint invert`) as the negative of a copy of its triple");
  cmd->add_option("--inverted-edits", a->inverted_edits,
                  "Edit kinds for --inverted-negatives, in order (default " +
                      edit_list_string(text::near_miss_edit_kinds()) + ")")
      ->needs("--inverted-negatives");
  cmd->add_option("--architecture", a->architecture, "cnn (F3) or transformer (F4)");
  cmd->add_option("--map-size", a->map_size, "Maps are padded or cropped to this size (reference 128)");
  cmd->add_option("--width", a->width, "F3: first conv channels (reference 128); F4: patch embedding size");
  cmd->add_option("--patch", a->patch, "F4: patch side");
  cmd->add_option("--feed-forward", a->feed_forward, "F4: feed-forward width");
  cmd->add_option("--dropout", a->dropout, "Dropout");
  cmd->add_option("--out", a->out, "Verifier directory to write")->required();
  cmd->add_option("--epochs", a->epochs, "Epochs");
  cmd->add_option("--batch-size", a->batch, "Triples per batch (in-batch candidates)");
  cmd->add_option("--lr", a->lr, "AdamW learning rate");
  cmd->add_option("--weight-decay", a->weight_decay, "AdamW weight decay");
  cmd->add_option("--warmup", a->warmup, "Share of steps with linear warm-up");
  cmd->add_option("--temperature", a->temperature, "InfoNCE temperature");
  cmd->add_option("--patience", a->patience, "Stop after this many epochs without a better dev AUC (0 = never)");
  cmd->add_option("--seed", a->seed, "Seed of initialisation and data order");
  cmd->add_option("--threads", a->threads, "Threads (0 = all cores)");
  add_checkpoint_options(*cmd, a->checkpoint);
  cmd->callback([a] {
    training::VerifierTrainConfig config;
    config.shape.architecture = scoring::parse_verifier_architecture(a->architecture);
    config.shape.map_size = a->map_size;
    config.shape.width = a->width;
    config.shape.patch = a->patch;
    config.shape.feed_forward = a->feed_forward;
    config.shape.dropout = a->dropout;
    scoring::validate(config.shape);
    config.temperature = a->temperature;
    config.epochs = a->epochs;
    config.batch_size = a->batch;
    config.learning_rate = a->lr;
    config.weight_decay = a->weight_decay;
    config.warmup_ratio = a->warmup;
    config.seed = a->seed;
    config.threads = a->threads;
    config.patience = a->patience;
    config.output_dir = a->out;
    config.encoder_learning_rate = a->encoder_lr;
    config.checkpoint_every = a->checkpoint.every;
    config.resume = !a->checkpoint.fresh;
    config.data_description = "sick-near-miss:" + a->pairs;
    if (!a->dev_pairs.empty()) config.dev_pairs = training::sick_near_miss_pairs(a->dev_pairs, a->min_overlap);
    auto triples = training::sick_near_miss_triples(a->pairs, a->min_overlap);
    std::cerr << "training on " << triples.size() << " near-miss triples";
    if (a->inverted_negatives) {
      text::InverterOptions edits;
      edits.edits = a->inverted_edits.empty() ? text::near_miss_edit_kinds() : parse_edit_list(a->inverted_edits);
      const auto added = training::add_inverted_negatives(triples, text::Inverter(edits));
      std::cerr << " and " << added << " with an inverted anchor as the negative";
      config.data_description += " +inverted-negatives";
    }
    std::cerr << "\n";
    auto encoder = load_encoder(a->model, a->threads);
    const auto report = training::train_verifier(*encoder, triples, config, [](const training::TrainProgress& p) {
      std::cerr << "\r" << training::format_progress(p) << std::flush;
      return true;
    });
    std::cerr << "\n";
    print_resumed(report.resumed_from);
    std::cout << "trained " << report.steps << " steps, final loss " << std::fixed << std::setprecision(4)
              << report.final_loss << ", " << std::setprecision(1) << report.examples_per_second << " triples/s";
    if (report.best_dev_score) std::cout << ", best dev near-miss AUC " << std::setprecision(4) << *report.best_dev_score;
    std::cout << " -> " << report.output_dir << "\n";
    if (!report.encoder_dir.empty()) {
      std::cout << "fine-tuned encoder -> " << report.encoder_dir
                << " (build the index with --model " << report.encoder_dir << " for this verifier)\n";
    }
  });
}

void add_near_miss_command(CLI::App& app) {
  struct Args {
    std::string model = kDefaultDenseModel, pairs;
    std::vector<std::string> verifiers;
    double min_overlap = 0.5;
    int threads = 0;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "near-miss", "ROC-AUC of token-map scores for paraphrase vs near-miss pairs (higher = near-misses rejected)");
  cmd->add_option("--model", a->model, "Encoder whose token vectors make the maps (name or directory)");
  cmd->add_option("--pairs", a->pairs, "SICK pairs_<split>.tsv")->required();
  cmd->add_option("--verifier", a->verifiers, "Map verifiers to score too (directories or TorchScript files)");
  cmd->add_option("--min-overlap", a->min_overlap, "Word overlap a contradiction needs to count as a near-miss");
  cmd->add_option("--threads", a->threads, "Threads (0 = all cores)");
  cmd->callback([a] {
    const auto pairs = training::sick_near_miss_pairs(a->pairs, a->min_overlap);
    std::size_t near_misses = 0;
    for (const auto& p : pairs) near_misses += p.near_miss;
    auto encoder = load_encoder(a->model, a->threads);
    std::cout << "pairs " << pairs.size() - near_misses << " paraphrase, " << near_misses << " near-miss (overlap >= "
              << a->min_overlap << "), encoder " << encoder->manifest().name << "\n";
    std::cout << std::left << std::setw(28) << "scorer" << std::right << std::setw(8) << "AUC" << std::setw(12)
              << "mean para" << std::setw(12) << "mean near" << "\n";
    print_near_miss_row("F0 mean", training::evaluate_near_misses(*encoder, pairs, reduction(scoring::map_mean)));
    print_near_miss_row("F1 maxsim", training::evaluate_near_misses(*encoder, pairs, reduction(scoring::map_maxsim)));
    print_near_miss_row("F2 alignment",
                        training::evaluate_near_misses(*encoder, pairs, reduction(alignment_with_defaults)));
    for (const auto& path : a->verifiers) {
      const auto verifier = scoring::load_map_verifier(path);
      print_near_miss_row(verifier->name(), training::evaluate_near_misses(*encoder, pairs, [&](const std::vector<Matrix>& maps) {
                            return verifier->score(maps);
                          }));
    }
  });
}

}  // namespace counterpoint::cli
