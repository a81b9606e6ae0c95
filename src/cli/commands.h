// counterpoint/cli: the command-line program, a thin shell over the C++ API.
// Each file registers one family of subcommands on the CLI11 application.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "counterpoint/app/settings.h"
#include "counterpoint/encoder/defaults.h"
#include "counterpoint/data/beir.h"
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
// A library message with the fields it names ("TrainConfig.learning_rate", "SearchParams::ef_search",
// "tune_alpha", "qrels not found: ...", "trained_weights head", ...) replaced by the flags that set
// them ("--lr", "--ef-search", "--tune-alpha", "--qrels not found: ...", "--head-only"); user_terms.cpp
// says where a name counts as a field. kSettings: a refusal of a setting (InvalidArgument). kFile: a
// missing or damaged file's message (FileNotFound, CorruptFile), which also quotes the file's own
// names and paths: only the workflows' fixed frames ("qrels not found: P") are read there.
enum class About { kSettings, kFile };
std::string in_user_terms(const std::string& message, About about = About::kSettings);
// "kind,kind,..." (names of text::EditKind) -> the kinds in that order; InvalidArgument for an
// unknown name or an empty list.
std::vector<text::EditKind> parse_edit_list(const std::string& list);
// The inverse, for help texts: "negation-removed,verb-antonym,...".
std::string edit_list_string(const std::vector<text::EditKind>& kinds);

// The search settings a command takes, as flags made from the one table (app/settings.h): each
// holds what CLI11 parsed, and resolve() hands the given ones to app::search_options_from.
struct SearchArgs {
  struct Flag {
    const app::SearchSetting* setting = nullptr;
    std::uint64_t count = 0;  // unsigned: the CLI's one rule for counts refuses "-k -1" by flag
    double number = 0.0;
    std::string name;
    bool on = false;
    CLI::Option* option = nullptr;
  };
  retrieval::SearchOptions defaults;
  std::vector<std::unique_ptr<Flag>> flags;  // stable addresses: CLI11 writes through them
  // Whether the user gave the setting `keyword` on the command line.
  bool given(const std::string& keyword) const;
  // The command's defaults with the given settings applied (InvalidArgument as search_options_from).
  retrieval::SearchOptions resolve() const;
};
// Every setting of a full search (stage 1, scorer, the rest) as flags.
void add_search_options(CLI::App* cmd, SearchArgs& args, const retrieval::SearchOptions& defaults);
// Stage 1 alone (stage1, fusion, lambda, rrf-k, candidates), for commands that rank by stage 1.
void add_stage1_options(CLI::App* cmd, SearchArgs& args, const retrieval::SearchOptions& defaults);
// Stage 2's scorer, alpha and sparsity scale; `scorers` lists the names the command takes.
void add_scorer_options(CLI::App* cmd, SearchArgs& args, const retrieval::SearchOptions& defaults,
                        const std::string& scorers);
// --sparsity-scale TAU (the magnitude gate); count() of the returned option says whether it was given.
CLI::Option* add_sparsity_scale_option(CLI::App* cmd, float& scale);

std::vector<std::string> query_ids(const std::vector<data::Query>& queries);

// --feature-cache DIR and --no-feature-cache (which empties `folder`).
void add_feature_cache_options(CLI::App* cmd, std::string& folder);

// The first existing models folder names are looked up in (counterpoint::models_directory).
std::string default_models_dir();
// The model installer (models/install_model.py: pins and converters beside it): the installed
// copy (<prefix>/share/counterpoint/models), else the source tree's.
std::string model_installer();
// The Python that runs it: $COUNTERPOINT_PYTHON (the pip package's console script sets it to its
// own interpreter), else set-up's .venv of the checkout that built this program, else the one the
// build was configured with.
std::string model_installer_python();
// This program's own path (the converter runs it to check a converted model's tokenizer).
std::string executable_path();
// The bundled example corpus: ./examples/corpus, else the installed copy
// (<prefix>/share/counterpoint/examples/corpus), else the source tree's.
std::string default_example_corpus();
// A model given by directory path, or by name (counterpoint::resolve_model), loaded.
std::shared_ptr<Encoder> load_encoder(const std::string& name_or_dir, int threads);
// The one convention of every long job's progress (encoding, indexing, training): on a terminal
// one line on stderr redrawn in place; in a log (stderr not a terminal) a line every 5 seconds and
// the last one.
class ProgressLine {
 public:
  void show(const std::string& text, bool last);
  static bool on_terminal();

 private:
  std::chrono::steady_clock::time_point printed_at_{};
  bool printed_ = false;
};
ProgressCallback stderr_progress(const std::string& label);

// Prints "resumed from the checkpoint at step N" when a training continued a checkpoint.
void print_resumed(std::size_t resumed_from);

}  // namespace counterpoint::cli
