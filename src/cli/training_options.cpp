#include "training_options.h"

#include <iostream>

#include "commands.h"

namespace counterpoint::cli {

void add_optimizer_options(CLI::App& cmd, training::OptimizerSettings& s) {
  cmd.add_option("--epochs", s.epochs, "Epochs");
  cmd.add_option("--batch-size", s.batch_size,
                 "Triples per batch (in-batch negatives); the default is lowered to the triples' distinct groups "
                 "when they are fewer");
  cmd.add_option("--lr", s.learning_rate, "AdamW learning rate");
  cmd.add_option("--weight-decay", s.weight_decay, "AdamW weight decay");
  cmd.add_option("--warmup", s.warmup_ratio, "Share of steps with linear warm-up");
  cmd.add_option("--seed", s.seed, "Seed of data order and initialisation");
  cmd.add_option("--threads", s.threads, "Threads (0 = all cores)");
}

void add_loop_options(CLI::App& cmd, training::LoopSettings& s, const std::string& out_help) {
  cmd.add_option("--out", s.output_dir, out_help)->required();
  cmd.add_option("--max-steps", s.max_steps, "Stop after this many steps (0 = all epochs)");
  cmd.add_option("--checkpoint-every", s.checkpoint_every,
                 "Write <out>/checkpoint every N steps; rerunning the same command resumes from it");
  cmd.add_flag_callback("--fresh", [&s] { s.resume = false; }, "Ignore a checkpoint in --out and start afresh");
}

training::TrainProgressCallback train_progress() {
  auto line = std::make_shared<ProgressLine>();
  return [line](const training::TrainProgress& p) {
    line->show(training::format_progress(p), p.step == p.total_steps);
    return true;
  };
}

void print_run_end(const training::TrainReport& report) {
  if (ProgressLine::on_terminal()) std::cerr << "\n";
  print_resumed(report.resumed_from);
  for (const auto& note : report.notes) std::cerr << "note: " << in_user_terms(note) << "\n";
}

}  // namespace counterpoint::cli
