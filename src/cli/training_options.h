// counterpoint/cli: what every `train` command shares. Its optimiser and loop options are bound
// straight to the library's settings (training_loop.h), so their defaults are the structs' and
// no command copies them field by field; names (loss, sparsity, architecture, ...) are parsed by
// the library's parsers while the command line is read, before any work.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "counterpoint/training/training_loop.h"

namespace counterpoint::cli {

// --epochs, --batch-size, --lr, --weight-decay, --warmup, --seed, --threads.
void add_optimizer_options(CLI::App& cmd, training::OptimizerSettings& settings);
// --out (required; `out_help` says what it receives), --max-steps, --checkpoint-every, --fresh.
void add_loop_options(CLI::App& cmd, training::LoopSettings& settings, const std::string& out_help);

// An option whose value is a name: `parse` turns it into `target` as the command line is read (an
// unknown name ends the command with the parser's message), and to_string(target) is the default shown.
template <typename T>
CLI::Option* add_name_option(CLI::App& cmd, const std::string& flag, T& target, T (*parse)(const std::string&),
                             const std::string& help) {
  return cmd.add_option_function<std::string>(flag, [&target, parse](const std::string& name) { target = parse(name); },
                                              help)
      ->default_str(to_string(target));
}

// The progress line of a run on stderr, redrawn in place.
training::TrainProgressCallback train_progress();
// After a run: ends the progress line, and says when the run continued a checkpoint.
void print_run_end(const training::TrainReport& report);

}  // namespace counterpoint::cli
