#include "counterpoint/text/sentencepiece.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/text/sentencepiece_plugin.h"
#include "unicode.h"

namespace counterpoint {
namespace {

constexpr const char* kPluginFile = "libcounterpoint_sentencepiece.so";

struct PluginApi {
  std::string path;
  decltype(&cp_spm_load) load = nullptr;
  decltype(&cp_spm_free) free_model = nullptr;
  decltype(&cp_spm_piece_size) piece_size = nullptr;
  decltype(&cp_spm_pad_id) pad_id = nullptr;
  decltype(&cp_spm_unk_id) unk_id = nullptr;
  decltype(&cp_spm_encode) encode = nullptr;
  decltype(&cp_spm_free_encoding) free_encoding = nullptr;
  decltype(&cp_spm_free_string) free_string = nullptr;
};

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::vector<std::string> plugin_candidates() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("COUNTERPOINT_PLUGIN_DIR"); env && *env) dirs.emplace_back(env);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_candidates), &info) != 0 && info.dli_fname) {
    std::string here = directory_of(info.dli_fname);
    dirs.push_back(here);
    dirs.push_back(join_path(here, "../lib"));
  }
#ifdef COUNTERPOINT_PLUGIN_DIR
  dirs.emplace_back(COUNTERPOINT_PLUGIN_DIR);
#endif
  return dirs;
}

// RTLD_DEEPBIND keeps the plugin's protobuf symbols from binding to libtorch's. The
// sanitizer runtimes refuse RTLD_DEEPBIND, so sanitized builds go without it.
int open_flags() {
#if defined(__SANITIZE_ADDRESS__)
  return RTLD_NOW | RTLD_LOCAL;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return RTLD_NOW | RTLD_LOCAL;
#else
  return RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif
#else
  return RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif
}

template <typename F>
void bind(void* handle, const std::string& path, const char* name, F& target) {
  void* symbol = dlsym(handle, name);
  if (!symbol) throw CorruptFile(path + ": SentencePiece plugin lacks the symbol " + name);
  target = reinterpret_cast<F>(symbol);
}

PluginApi open_plugin() {
  std::string tried;
  for (const std::string& dir : plugin_candidates()) {
    std::string path = join_path(dir, kPluginFile);
    tried += "\n  " + path;
    if (!path_exists(path)) continue;
    void* handle = dlopen(path.c_str(), open_flags());
    if (!handle) {
      const char* why = dlerror();
      throw CorruptFile(path + ": cannot load the SentencePiece plugin: " + (why ? why : "unknown error"));
    }
    PluginApi api;
    api.path = path;
    decltype(&cp_spm_abi_version) abi_version = nullptr;
    bind(handle, path, "cp_spm_abi_version", abi_version);
    if (abi_version() != CP_SPM_ABI_VERSION) {
      throw CorruptFile(path + ": SentencePiece plugin ABI version " + std::to_string(abi_version()) +
                        ", this library needs " + std::to_string(CP_SPM_ABI_VERSION));
    }
    bind(handle, path, "cp_spm_load", api.load);
    bind(handle, path, "cp_spm_free", api.free_model);
    bind(handle, path, "cp_spm_piece_size", api.piece_size);
    bind(handle, path, "cp_spm_pad_id", api.pad_id);
    bind(handle, path, "cp_spm_unk_id", api.unk_id);
    bind(handle, path, "cp_spm_encode", api.encode);
    bind(handle, path, "cp_spm_free_encoding", api.free_encoding);
    bind(handle, path, "cp_spm_free_string", api.free_string);
    return api;  // the handle stays open for the life of the process
  }
  throw FileNotFound(std::string("SentencePiece plugin ") + kPluginFile +
                     " not found (set COUNTERPOINT_PLUGIN_DIR); tried:" + tried);
}

const PluginApi& plugin() {
  static std::mutex mutex;
  static std::unique_ptr<PluginApi> api;
  std::lock_guard<std::mutex> lock(mutex);
  if (!api) api = std::make_unique<PluginApi>(open_plugin());
  return *api;
}

std::string take_error(const PluginApi& api, char* error) {
  std::string message = error ? error : "unknown error";
  if (error) api.free_string(error);
  return message;
}

}  // namespace

struct SentencePieceTokenizer::Model {
  Model(const PluginApi* a, cp_spm_model* h) : api(a), handle(h) {}
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model() { api->free_model(handle); }
  const PluginApi* api;
  cp_spm_model* handle;
};

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_path) {
  if (!path_exists(model_path)) throw FileNotFound(model_path + ": SentencePiece model not found");
  const PluginApi& api = plugin();
  char* error = nullptr;
  cp_spm_model* handle = api.load(model_path.c_str(), &error);
  if (!handle) {
    throw CorruptFile(model_path + ": not a readable SentencePiece model (" + take_error(api, error) + ")");
  }
  model_ = std::make_unique<Model>(&api, handle);
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

Encoding SentencePieceTokenizer::encode(std::string_view text, std::size_t max_length) const {
  text::require_valid_utf8(text, "text");
  const PluginApi& api = *model_->api;
  cp_spm_encoding raw{};
  char* error = nullptr;
  if (api.encode(model_->handle, text.data(), text.size(), &raw, &error) != 0) {
    throw InvalidArgument("SentencePiece could not encode the text: " + take_error(api, error));
  }
  Encoding e;
  std::size_t keep = raw.size;
  if (max_length != 0 && keep > max_length) {
    keep = max_length;
    e.truncated = true;
  }
  e.ids.reserve(keep);
  e.pieces.reserve(keep);
  for (std::size_t i = 0; i < keep; ++i) {
    e.ids.push_back(raw.ids[i]);
    e.pieces.emplace_back(raw.pieces[i]);
  }
  api.free_encoding(&raw);
  e.type_ids.assign(e.ids.size(), 0);
  return e;
}

int64_t SentencePieceTokenizer::pad_id() const {
  int32_t id = model_->api->pad_id(model_->handle);
  return id >= 0 ? id : 0;
}

int64_t SentencePieceTokenizer::unk_id() const { return model_->api->unk_id(model_->handle); }

std::size_t SentencePieceTokenizer::vocab_size() const {
  return static_cast<std::size_t>(model_->api->piece_size(model_->handle));
}

std::string SentencePieceTokenizer::plugin_path() { return plugin().path; }

}  // namespace counterpoint
