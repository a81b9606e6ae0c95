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
#include "training_options.h"

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

void add_near_miss_source_options(CLI::App& cmd, training::NearMissSource& s) {
  cmd.add_option("--pairs", s.pairs, "SICK pairs_<split>.tsv to build training triples from")->required();
  cmd.add_option("--dev-pairs", s.dev_pairs, "SICK pairs file for the per-epoch near-miss AUC (best epoch kept)");
  cmd.add_option("--min-overlap", s.min_overlap, "Word overlap a contradiction needs to count as a near-miss");
  cmd.add_flag("--inverted-negatives", s.inverted_negatives,
               "Also train on structure-targeted negatives: each anchor's minimal edit (role swap, negation, "
               "antonym; see `counterpoint invert`) as the negative of a copy of its triple");
  cmd.add_option_function<std::string>(
         "--inverted-edits", [&s](const std::string& list) { s.inverted_edits = parse_edit_list(list); },
         "Edit kinds for --inverted-negatives, in order (default " + edit_list_string(s.inverted_edits) + ")")
      ->needs("--inverted-negatives");
}

void add_shape_options(CLI::App& cmd, scoring::VerifierShape& shape) {
  add_name_option(cmd, "--architecture", shape.architecture, scoring::parse_verifier_architecture,
                  "cnn (F3) or transformer (F4)");
  cmd.add_option("--map-size", shape.map_size, "Maps are padded or cropped to this size (reference 128)");
  cmd.add_option("--width", shape.width, "F3: first conv channels (reference 128); F4: patch embedding size");
  cmd.add_option("--patch", shape.patch, "F4: patch side");
  cmd.add_option("--feed-forward", shape.feed_forward, "F4: feed-forward width");
  cmd.add_option("--dropout", shape.dropout, "Dropout");
}

}  // namespace

void add_train_verifier_command(CLI::App& train) {
  struct Args {
    std::string model = kDefaultDenseModel;
    training::NearMissSource source;
    training::VerifierTrainConfig config;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = train.add_subcommand("verifier", "Train a map verifier (F3 cnn, F4 transformer) on SICK near-misses");
  cmd->add_option("--model", a->model, "Encoder whose token vectors make the maps (name or directory)");
  cmd->add_option("--encoder-lr", a->config.encoder_learning_rate,
                  "> 0: train a copy of the encoder end to end at this learning rate (reference ~1.5e-5), written "
                  "to OUT/encoder; 0 = frozen encoder");
  add_near_miss_source_options(*cmd, a->source);
  add_shape_options(*cmd, a->config.shape);
  cmd->add_option("--temperature", a->config.temperature, "InfoNCE temperature");
  cmd->add_option("--patience", a->config.patience, "Stop after this many epochs without a better dev AUC (0 = never)");
  add_optimizer_options(*cmd, a->config);
  add_loop_options(*cmd, a->config, "Verifier directory to write");
  cmd->callback([a] {
    const auto report = training::train_verifier_from_source(a->model, a->source, a->config, train_progress());
    print_run_end(report);
    std::cerr << "training on " << report.triples << " near-miss triples";
    if (a->source.inverted_negatives) std::cerr << " and " << report.inverted << " with an inverted anchor as the negative";
    std::cerr << "\n";
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
    double min_overlap = training::kDefaultMinOverlap;
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
