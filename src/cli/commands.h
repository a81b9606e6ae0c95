// counterpoint/cli: the command-line program, a thin shell over the C++ API.
// Each file registers one family of subcommands on the CLI11 application.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <memory>
#include <string>

#include "counterpoint/encoder/defaults.h"
#include "counterpoint/data/run.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/retrieval/retriever.h"
#include "counterpoint/text/inversion.h"

namespace counterpoint::cli {

void add_models_commands(CLI::App& app);
void add_index_commands(CLI::App& app);
void add_search_commands(CLI::App& app);
void add_eval_commands(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_train_commands(CLI::App& app);
// `train verifier` under the `train` command, and the top-level `near-miss` evaluation.
void add_train_verifier_command(CLI::App& train);
void add_near_miss_command(CLI::App& app);
void add_stance_command(CLI::App& app);
void add_clean_command(CLI::App& app);
void add_invert_command(CLI::App& app);
// "kind,kind,..." (names of text::EditKind) -> the kinds in that order; InvalidArgument for an
// unknown name or an empty list.
std::vector<text::EditKind> parse_edit_list(const std::string& list);
// The inverse, for help texts: "negation-removed,verb-antonym,...".
std::string edit_list_string(const std::vector<text::EditKind>& kinds);

// Where installed models live: $COUNTERPOINT_MODELS, else ./models/installed.
std::string default_models_dir();
// The bundled example corpus: ./examples/corpus, else the installed copy
// (<prefix>/share/counterpoint/examples/corpus), else the source tree's.
std::string default_example_corpus();
// A model given by directory path, or by name under default_models_dir().
std::string resolve_model(const std::string& name_or_dir);
std::shared_ptr<Encoder> load_encoder(const std::string& name_or_dir, int threads);
// A progress line on stderr, redrawn in place.
ProgressCallback stderr_progress(const std::string& label);

// --checkpoint-every N and --fresh, which every `train` command takes.
struct CheckpointArgs {
  std::size_t every = 0;  // 0 = no checkpoints
  bool fresh = false;     // ignore a checkpoint in --out
};
void add_checkpoint_options(CLI::App& cmd, CheckpointArgs& args);
// Prints "resumed from the checkpoint at step N" when a training continued a checkpoint.
void print_resumed(std::size_t resumed_from);

}  // namespace counterpoint::cli
