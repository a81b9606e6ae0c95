#include "counterpoint/encoder/model_discovery.h"

#include <algorithm>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/core/spelling.h"

namespace counterpoint {

namespace {

// An environment variable's value when it is set to an absolute path (the XDG rule: a relative
// value is ignored), else "".
std::string absolute_env(const char* name) {
  const char* value = std::getenv(name);
  return value && value[0] == '/' ? std::string(value) : std::string();
}

// Installed models are named in lower case after their upstream model; the hub's spellings
// ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2") name them too.
std::string installed_name(std::string name) {
  const std::string organisation = "sentence-transformers/";
  if (name.compare(0, organisation.size(), organisation) == 0) name = name.substr(organisation.size());
  return ascii_lower(name);
}

bool is_model_dir(const std::string& dir) { return path_exists(join_path(dir, "manifest.json")); }

// The models an installed package carries: share/counterpoint/models under the prefix of the file
// holding this code (libcounterpoint.so in <prefix>/lib), so a package moved to another prefix, or
// used without the checkout it was built from, still finds them. "" when the file is unknown.
std::string package_models_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&package_models_directory), &info) == 0 || !info.dli_fname) return "";
  std::error_code error;
  const std::filesystem::path library = std::filesystem::canonical(info.dli_fname, error);
  if (error) return "";
  return (library.parent_path() / COUNTERPOINT_PACKAGE_MODELS_FROM_LIB).lexically_normal().string();
}

}  // namespace

std::string user_models_directory() {
  std::string cache = absolute_env("XDG_CACHE_HOME");
  if (cache.empty()) {
    const std::string home = absolute_env("HOME");
    if (home.empty()) {
      throw InvalidArgument("no per-user model cache: neither XDG_CACHE_HOME nor HOME is set to an absolute path");
    }
    cache = join_path(home, ".cache");
  }
  return join_path(join_path(cache, "counterpoint"), "models");
}

std::vector<ModelFolder> model_search_path(const std::string& fallback_models_dir) {
  std::vector<ModelFolder> folders;
  const auto add = [&](const std::string& path, const char* role) {
    if (path.empty()) return;
    for (const ModelFolder& f : folders) {
      std::error_code error;
      if (f.path == path || std::filesystem::equivalent(f.path, path, error)) return;
    }
    folders.push_back({path, role});
  };
  const char* env = std::getenv("COUNTERPOINT_MODELS");
  if (env) add(env, "$COUNTERPOINT_MODELS");
  add(fallback_models_dir, "given");
  add(package_models_directory(), "package's models");
  add(COUNTERPOINT_INSTALLED_MODELS_DIR, "set-up's models");
  try {
    add(user_models_directory(), "per-user cache");
  } catch (const InvalidArgument&) {
    // No home to cache in: the other folders still serve.
  }
  return folders;
}

std::string models_directory(const std::string& fallback_models_dir) {
  const auto folders = model_search_path(fallback_models_dir);
  for (const ModelFolder& f : folders) {
    if (path_exists(f.path)) return f.path;
  }
  // None exists yet: where an install would go, or "" with no home to cache in (the CLI reads
  // this while it starts, so it must not throw).
  return folders.empty() ? std::string() : folders.back().path;
}

std::vector<std::string> installed_models(const std::string& dir) {
  std::error_code error;
  std::filesystem::directory_iterator entries(dir, error);
  if (error) throw FileNotFound("models directory not found: " + dir);
  std::vector<std::string> names;
  for (const auto& entry : entries) {
    const std::string name = entry.path().filename().string();
    if (is_model_dir(join_path(dir, name))) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> installed_models() {
  std::vector<std::string> names;
  for (const ModelFolder& f : model_search_path()) {
    try {
      const auto found = installed_models(f.path);
      names.insert(names.end(), found.begin(), found.end());
    } catch (const FileNotFound&) {
      // A folder of the search path that does not exist holds no models.
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string resolve_model(const std::string& name_or_dir, const std::string& fallback_models_dir) {
  if (is_model_dir(name_or_dir)) return name_or_dir;
  const auto folders = model_search_path(fallback_models_dir);
  const std::string name = installed_name(name_or_dir);
  // A name is one folder's entry; a path (with a '/' other than the hub's organisation) is not.
  if (!name_or_dir.empty() && name.find('/') == std::string::npos) {
    for (const ModelFolder& f : folders) {
      for (const std::string& candidate : {name_or_dir, name}) {
        if (candidate.find('/') == std::string::npos && is_model_dir(join_path(f.path, candidate))) {
          return join_path(f.path, candidate);
        }
      }
    }
  }
  std::string looked;
  std::vector<std::string> installed;
  for (const ModelFolder& f : folders) {
    looked += (looked.empty() ? "" : ", ") + f.path + " (" + f.role;
    try {
      const auto found = installed_models(f.path);
      installed.insert(installed.end(), found.begin(), found.end());
      std::string listed;
      for (const std::string& n : found) listed += (listed.empty() ? "" : " ") + n;
      looked += found.empty() ? ": empty)" : ": " + listed + ")";
    } catch (const FileNotFound&) {
      looked += ": missing)";
    }
  }
  std::sort(installed.begin(), installed.end());
  installed.erase(std::unique(installed.begin(), installed.end()), installed.end());
  if (std::filesystem::is_directory(name_or_dir)) {
    // A folder the user named that exists: it is the folder, not the name, that is wrong.
    if (std::filesystem::is_regular_file(join_path(name_or_dir, "config.json"))) {
      // A Hugging Face or sentence-transformers checkpoint: what converts it, in one line.
      // "My-Model/" names the folder My-Model, as the converter's default name does.
      std::filesystem::path folder = std::filesystem::absolute(name_or_dir).lexically_normal();
      if (folder.filename().empty()) folder = folder.parent_path();
      const std::string folder_name = folder.filename().string();
      throw FileNotFound(name_or_dir + " is a Hugging Face checkpoint (config.json), not a counterpoint model: "
                         "`counterpoint models convert " + name_or_dir + "` (Python: `cp.models.convert(...)`) "
                         "converts a BERT or MPNet one into the per-user cache, then load it by its name ('" +
                         ascii_lower(folder_name) + "')");
    }
    throw FileNotFound(name_or_dir + " is a folder but not a model: a model folder holds manifest.json beside its "
                       "weights (`counterpoint models list` shows the installed models)");
  }
  throw FileNotFound("model '" + name_or_dir + "' not found as a directory nor in the models folders " + looked +
                     did_you_mean(name, installed) +
                     "; `counterpoint models install NAME` fetches a pinned model into the per-user cache");
}

}  // namespace counterpoint
