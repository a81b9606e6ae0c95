// counterpoint/encoder: where a model name leads.
// Like sentence-transformers' and the Hugging Face hub's caches, a name is looked up in every
// models folder in turn, the first holding it winning:
//   1. $COUNTERPOINT_MODELS, when set (one folder);
//   2. an installed package's own models: <prefix>/share/counterpoint/models beside the library's
//      <prefix>/lib (cmake --install copies set-up's models there), found from the library's file;
//   3. the folder set-up installed the default models into, recorded at build time (the checkout's);
//   4. the per-user cache that `counterpoint models install` fills:
//      $XDG_CACHE_HOME/counterpoint/models, by default ~/.cache/counterpoint/models.
// A directory holding a manifest.json is taken as it is before any of them. Names are compared
// case-insensitively, and the hub's spellings ("sentence-transformers/all-MiniLM-L6-v2") name the
// installed model (all-minilm-l6-v2). The working directory plays no part.
#pragma once

#include <string>
#include <vector>

namespace counterpoint {

// One place names are looked up in, and why it is on the list.
struct ModelFolder {
  std::string path;
  std::string role;  // "$COUNTERPOINT_MODELS", "package's models", "set-up's models", "per-user cache", "given"
};

// The folders of the search order above, whether or not they exist, each once; a non-empty
// `fallback_models_dir` is searched after $COUNTERPOINT_MODELS.
std::vector<ModelFolder> model_search_path(const std::string& fallback_models_dir = "");
// The per-user cache: $XDG_CACHE_HOME/counterpoint/models, else $HOME/.cache/counterpoint/models.
// InvalidArgument when neither variable is set to an absolute path.
std::string user_models_directory();

// A model given by its directory, or by name (model_search_path). FileNotFound naming every
// folder looked in, the models found there and the nearest name otherwise. The CLI and the
// Python module resolve names through this.
std::string resolve_model(const std::string& name_or_dir, const std::string& fallback_models_dir = "");
// The first existing folder of model_search_path, else the per-user cache (where installs go).
std::string models_directory(const std::string& fallback_models_dir = "");
// The names of the model directories (those holding a manifest.json) in `dir`, sorted;
// FileNotFound when `dir` is not a readable directory.
std::vector<std::string> installed_models(const std::string& dir);
// The names found in every existing folder of model_search_path, sorted, each once.
std::vector<std::string> installed_models();

}  // namespace counterpoint
