#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <vector>

#include "commands.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/core/spelling.h"
#include "counterpoint/app/corpus_index.h"
#include "counterpoint/core/version.h"

namespace counterpoint::cli {

namespace {

// The directory holding the running executable (for an installed CLI: <prefix>/bin).
std::string executable_dir() {
  try {
    return std::filesystem::path(executable_path()).parent_path().string();
  } catch (const Error&) {
    return ".";
  }
}

// The first of `candidates` that exists, else the first.
std::string first_existing(const std::vector<std::string>& candidates) {
  for (const auto& c : candidates) if (path_exists(c)) return c;
  return candidates.front();
}

}  // namespace

std::string default_models_dir() { return models_directory(); }

std::string default_example_corpus() {
  return first_existing({"examples/corpus", executable_dir() + "/../share/counterpoint/examples/corpus",
                         std::string(COUNTERPOINT_SOURCE_DIR) + "/examples/corpus"});
}

std::string model_installer() {
  return first_existing({executable_dir() + "/../share/counterpoint/models/install_model.py",
                         std::string(COUNTERPOINT_SOURCE_DIR) + "/models/install_model.py"});
}

std::string model_installer_python() {
  const char* python = std::getenv("COUNTERPOINT_PYTHON");
  if (python && *python) return python;
  // Set-up's environment (Debian's torch, plus the tokenizers package the converter's check needs)
  // when the checkout that built this CLI has one.
  const std::string setup_venv = std::string(COUNTERPOINT_SOURCE_DIR) + "/.venv/bin/python";
  return path_exists(setup_venv) ? setup_venv : COUNTERPOINT_PYTHON;
}

std::string executable_path() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find this program's own path (/proc/self/exe): " + ec.message());
  return exe.string();
}

std::shared_ptr<Encoder> load_encoder(const std::string& name_or_dir, int threads) {
  return app::load_model(name_or_dir, threads);
}

void ProgressLine::show(const std::string& text, bool last) {
  static const bool terminal = ::isatty(STDERR_FILENO) == 1;
  if (terminal) {
    std::cerr << "\r" << text << (last ? "\n" : "") << std::flush;
    return;
  }
  // In a log, carriage returns would pile thousands of frames into one line.
  const auto now = std::chrono::steady_clock::now();
  if (last || !printed_ || now - printed_at_ >= kProgressLogInterval) {
    std::cerr << text << "\n" << std::flush;
    printed_at_ = now;
    printed_ = true;
  }
}

bool ProgressLine::on_terminal() { return ::isatty(STDERR_FILENO) == 1; }

ProgressCallback stderr_progress(const std::string& label) {
  auto line = std::make_shared<ProgressLine>();
  return [label, line](std::size_t done, std::size_t total) {
    line->show(label + ": " + std::to_string(done) + "/" + std::to_string(total), done == total);
    return true;
  };
}

void print_resumed(std::size_t resumed_from) {
  if (resumed_from > 0) std::cout << "resumed from the checkpoint at step " << resumed_from << "\n";
}

namespace {

// The one rule for the values of numeric options, attached here to every option of every command
// whose value CLI11 converts to a number (type INT, UINT or FLOAT, one value or a list), so a flag
// added later is covered without a word of its own:
//  - an empty value is refused: CLI11 converts "" to 0, so `--alpha ''` searched with alpha 0
//    ("alpha 0 (given)") and `clean --threshold ''` removed every passage scoring at least 0;
//  - an unsigned option (counts, sizes, -k) takes a non-negative number that fits 64 bits: CLI11
//    would otherwise turn "-k -1" into 18446744073709551615, and "-k 1180591620717411303424"
//    (2**70) into the same number, and report that.
// CLI11 reports a refusal as "--alpha: needs a number; got an empty value" and exits non-zero
// before the command runs.
void check_numeric_options(CLI::App& app) {
  static const CLI::Validator non_empty(
      [](std::string& value) {
        return value.find_first_not_of(" \t") == std::string::npos ? std::string("needs a number; got an empty value")
                                                                    : std::string();
      },
      "", "non-empty");
  static const CLI::Validator non_negative(
      [](std::string& value) {
        const auto first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-') return "must be a non-negative integer, got " + value;
        unsigned long long parsed = 0;
        const char* begin = value.data() + (first == std::string::npos ? value.size() : first);
        if (std::from_chars(begin, value.data() + value.size(), parsed).ec == std::errc::result_out_of_range) {
          return "must be at most " + std::to_string(std::numeric_limits<std::uint64_t>::max()) + ", got " + value;
        }
        return std::string();
      },
      "", "non-negative");
  for (CLI::Option* option : app.get_options()) {
    // The type name is followed by the descriptions of the option's validators ("INT:INT in [1 - 8]").
    const std::string full_type = option->get_type_name();
    const std::string type = full_type.substr(0, full_type.find(':'));
    if (type == "INT" || type == "UINT" || type == "FLOAT") option->check(non_empty);
    if (type == "UINT") option->check(non_negative);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_numeric_options(*sub);
}

// For a word where a command is required but none has that name: "unknown command 'serach';
// did you mean 'search'?". "" otherwise (options, help, a command's own arguments).
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  std::string path = "counterpoint";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-' || current->get_require_subcommand_min() == 0) return "";
    std::vector<std::string> names;
    CLI::App* next = nullptr;
    for (CLI::App* sub : current->get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
      if (sub->get_name() == word) next = sub;
    }
    if (!next) {
      return "unknown command '" + word + "'" + did_you_mean(word, names) + " (" + path + " --help lists them)";
    }
    current = next;
    path += " " + word;
  }
  return "";
}

}  // namespace

}  // namespace counterpoint::cli

int main(int argc, char** argv) {
  using namespace counterpoint;
  CLI::App app{"counterpoint: retrieval of passages that contradict, attack or support a query"};
  app.set_version_flag("--version", std::string("counterpoint ") + version());
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();
  cli::add_demo_command(app);
  cli::add_models_commands(app);
  cli::add_index_commands(app);
  cli::add_search_commands(app);
  cli::add_eval_commands(app);
  cli::add_train_commands(app);
  cli::add_near_miss_command(app);
  cli::add_stance_command(app);
  cli::add_clean_command(app);
  cli::add_invert_command(app);
  cli::check_numeric_options(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const std::string unknown = cli::unknown_command(app, argc, argv); !unknown.empty()) {
      std::cerr << "counterpoint: " << unknown << "\n";
      return e.get_exit_code();
    }
    return app.exit(e);
  } catch (const FileNotFound& e) {
    // The path of a flag ("--qrels not found: P"); the path itself keeps its spelling.
    std::cerr << "counterpoint: " << cli::in_user_terms(e.what(), cli::About::kFile) << "\n";
    return 2;
  } catch (const InvalidArgument& e) {
    // A setting the user gave.
    std::cerr << "counterpoint: " << cli::in_user_terms(e.what()) << "\n";
    return 1;
  } catch (const CorruptFile& e) {
    // A damaged file's message keeps the file's own terms; a workflow's advice names its flags.
    std::cerr << "counterpoint: " << cli::in_user_terms(e.what(), cli::About::kFile) << "\n";
    return 1;
  } catch (const Error& e) {
    std::cerr << "counterpoint: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "counterpoint: unexpected error: " << e.what() << "\n";
    return 1;
  }
  // Output lost to a full disk or a closed pipe (`search ... > /dev/full`) is a failure, not exit 0.
  if (!(std::cout << std::flush) || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << "counterpoint: could not write the output to stdout (disk full or pipe closed?)\n";
    return 1;
  }
  return 0;
}
