// `counterpoint models list|verify`: what is installed and whether it is intact.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

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

}  // namespace

void add_models_commands(CLI::App& app) {
  auto* models = app.add_subcommand("models", "List or verify installed models");
  models->require_subcommand(1);

  auto* list = models->add_subcommand("list", "Show installed models with their manifests' key facts");
  auto dir = std::make_shared<std::string>(default_models_dir());
  list->add_option("--models", *dir, "Directory holding model directories");
  list->callback([dir] {
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
}

}  // namespace counterpoint::cli
