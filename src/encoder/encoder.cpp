#include "counterpoint/encoder/encoder.h"

#include <omp.h>
#include <torch/torch.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <numeric>
#include <thread>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/core/spelling.h"
#include "counterpoint/core/threads.h"
#include "counterpoint/encoder/torch_model.h"

namespace counterpoint {

const std::string& prefix_for(const ModelManifest& manifest, const EncodeOptions& options) {
  static const std::string kEmpty;
  if (options.prefix_override) return *options.prefix_override;
  switch (options.role) {
    case TextRole::kQuery: return manifest.query_prefix;
    case TextRole::kDocument: return manifest.document_prefix;
    case TextRole::kNone: return kEmpty;
  }
  return kEmpty;
}

namespace {

// Order in which to visit texts so that each batch holds texts of similar length: padding
// then costs little. Length is measured in bytes, a cheap proxy for tokens.
std::vector<std::size_t> length_order(const std::vector<std::string>& texts) {
  std::vector<std::size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return texts[a].size() < texts[b].size(); });
  return order;
}

// How an encoder's threads are spent. libtorch runs its matrix products in OpenBLAS, which has
// its own thread pool, and its element-wise operations in OpenMP. With both at N threads on N
// cores, OpenMP's idle threads spin between parallel regions and take the cores from OpenBLAS's:
// profiled on 3,000 SICK sentences with 2 threads, 40% of the samples were in libgomp, 26% in
// the kernel's scheduler and 25% in sgemm. So the N threads go to OpenBLAS, and a forward pass
// runs the OpenMP side on the calling thread alone (SerialOpenMp): 148 -> 410-470 sentences/s.
// A libtorch with MKL (PyPI's builds) runs its matrix products on OpenMP's own threads: there
// the N threads stay with OpenMP, which then holds every core, and OpenBLAS (FAISS's) is idle.
void set_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  // libtorch already loaded OpenBLAS (Debian's libblas.so.3 is OpenBLAS); another BLAS keeps
  // its own setting (OMP_NUM_THREADS / its own variables).
  static const SetThreads set = reinterpret_cast<SetThreads>(openblas_function("openblas_set_num_threads"));
  if (set) set(threads);
}

// For the calling thread only, for one encode call: OpenMP's thread count is a per-thread setting
// (torch::set_num_threads would also resize libtorch's global pthreadpool on every call).
// torch::get_num_threads comes first: it runs libtorch's once-per-thread initialisation, which
// would otherwise reset the count to libtorch's global one inside the forward pass.
class SerialOpenMp {
 public:
  SerialOpenMp() : active_(!at::hasMKL()), before_(torch::get_num_threads()) {
    if (active_) omp_set_num_threads(1);
  }
  ~SerialOpenMp() {
    if (active_) omp_set_num_threads(before_);
  }
  SerialOpenMp(const SerialOpenMp&) = delete;
  SerialOpenMp& operator=(const SerialOpenMp&) = delete;

 private:
  bool active_;  // false where the matrix products themselves run on OpenMP (MKL)
  int before_;
};

// Runs `visit(pass, pass_positions)` over length-sorted batches of options.batch_size texts,
// tokenised with `prefix` (counted into `report` when given). A batch whose padded size passes
// options.max_batch_tokens is visited as several passes of consecutive rows, each cut to its own
// longest text: pass_positions[i] is the caller's index of the pass's row i.
template <typename Visit>
void for_each_batch(const TorchTextModel& model, const std::vector<std::string>& texts, const std::string& prefix,
                    const EncodeOptions& options, const char* operation, EncodeReport* report, Visit visit) {
  if (options.batch_size == 0) throw InvalidArgument(std::string(operation) + ": batch_size must be > 0");
  SerialOpenMp serial_openmp;
  const auto order = length_order(texts);
  std::vector<std::string> batch_texts;
  std::vector<std::size_t> positions;
  for (std::size_t start = 0; start < order.size(); start += options.batch_size) {
    const std::size_t end = std::min(order.size(), start + options.batch_size);
    batch_texts.clear();
    positions.clear();
    for (std::size_t i = start; i < end; ++i) {
      positions.push_back(order[i]);
      batch_texts.push_back(texts[order[i]]);
    }
    TokenBatch batch = model.tokenize(batch_texts, prefix);
    if (report) {
      report->truncated += batch.truncated;
      report->tokens += batch.tokens;
    }
    const int64_t rows = batch.input_ids.size(0);
    const int64_t width = batch.input_ids.size(1);
    const int64_t rows_per_pass =
        options.max_batch_tokens == 0 ? rows : std::max<int64_t>(1, int64_t(options.max_batch_tokens) / width);
    // Ctrl-C is looked at before every forward pass (at most max_batch_tokens tokens), not only at
    // the progress reports: a caller's step of hundreds of long texts takes a minute on busy cores.
    if (rows <= rows_per_pass) {
      check_interrupt(operation);
      visit(batch, positions);
    } else {
      const torch::Tensor lengths = batch.attention_mask.sum(1);
      for (int64_t first = 0; first < rows; first += rows_per_pass) {
        const int64_t last = std::min(rows, first + rows_per_pass);
        const int64_t longest = std::max<int64_t>(1, lengths.slice(0, first, last).max().item<int64_t>());
        const std::vector<std::size_t> pass_positions(positions.begin() + first, positions.begin() + last);
        check_interrupt(operation);
        visit(select_rows(batch, torch::arange(first, last, torch::kInt64), longest), pass_positions);
      }
    }
    report_progress(options.progress, end, order.size(), operation);
  }
}

// A model file is input: its vectors must be ones a norm can be taken of. NaN or infinity would
// reach an index or a score silently, and so would components as large as +-3e38: finite, but
// their squares overflow float32, so normalisation divides them by an infinite norm, to zeros,
// which score 0 against everything. CorruptFile naming `model` unless the sum of squares along the
// last dimension is a finite float32 wherever `counted` (when defined: which positions are a
// text's tokens, not padding) holds.
void require_normalisable(const torch::Tensor& vectors, const torch::Tensor& counted, const std::string& model,
                          const std::string& what) {
  torch::Tensor finite = torch::isfinite(vectors.to(torch::kFloat32).square().sum(-1));
  if (counted.defined()) finite = finite.logical_or(counted.logical_not());
  if (!finite.all().item<bool>()) {
    throw CorruptFile("model " + model + " produced " + what + " too large to normalise (NaN, infinity, or components "
                      "whose squares overflow a float32, as +-3e38 do); its weights are damaged or the network is "
                      "not one this library can run");
  }
}

// Writes row i of a [positions.size(), out.cols()] batch of pooled embeddings, L2-normalised when
// `normalize`, to out row positions[i]; CorruptFile naming `model` for any other shape and for rows
// require_normalisable refuses.
void scatter_rows(const torch::Tensor& batch_rows, bool normalize, const std::vector<std::size_t>& positions,
                  const std::string& model, Matrix& out) {
  if (batch_rows.dim() != 2 || batch_rows.size(0) != int64_t(positions.size()) ||
      batch_rows.size(1) != int64_t(out.cols())) {
    throw CorruptFile("model " + model + " produced embeddings of another shape than [" +
                      std::to_string(positions.size()) + ", " + std::to_string(out.cols()) + "]");
  }
  require_normalisable(batch_rows, {}, model, "a non-finite embedding or one");
  const torch::Tensor pooled = (normalize ? l2_normalize(batch_rows, 1) : batch_rows).contiguous().to(torch::kFloat32);
  const float* src = pooled.data_ptr<float>();
  for (std::size_t i = 0; i < positions.size(); ++i) {
    std::copy(src + i * out.cols(), src + (i + 1) * out.cols(), out.row(positions[i]));
  }
}

}  // namespace

void require_embedding_source(const std::string& identity, std::size_t width, const std::string& what) {
  const std::string name = identity.substr(0, identity.find('@'));
  if (name == "external") return;
  std::string dir;
  try {
    dir = resolve_model(name);
  } catch (const FileNotFound& e) {
    throw InvalidArgument(what + " '" + identity + "' names no model: " + e.what() +
                          "; pass the Encoder itself, or \"external\" for rows of a model counterpoint does not know");
  }
  // The manifest alone says the width: no checksum of the network is needed for that.
  const std::string manifest = join_path(dir, "manifest.json");
  const std::size_t model_width = ModelManifest::parse(read_file(manifest), manifest).embedding_dim;
  if (model_width != width) {
    throw InvalidArgument(what + " '" + identity + "' names " + name + ", whose embeddings are " +
                          std::to_string(model_width) + "-wide, but the rows are " + std::to_string(width) + "-wide");
  }
}

void require_embedding_source(const Encoder& encoder, std::size_t width, const std::string& what) {
  if (encoder.dim() != width) {
    throw InvalidArgument(what + " " + encoder.identity() + " makes " + std::to_string(encoder.dim()) +
                          "-wide embeddings, but the rows are " + std::to_string(width) + "-wide");
  }
}

Encoder::Encoder(std::string dir, ModelManifest manifest, std::unique_ptr<TorchTextModel> model)
    : directory_(std::move(dir)), manifest_(std::move(manifest)), model_(std::move(model)) {}

Encoder::~Encoder() = default;

std::shared_ptr<Encoder> Encoder::load(const std::string& name_or_dir, const EncoderConfig& config) {
  const std::string model_dir = resolve_model(name_or_dir);
  const int threads = resolve_threads(config.threads, "EncoderConfig.threads");
  torch::set_num_threads(threads);
  set_blas_threads(threads);
  ModelManifest manifest = ModelManifest::load(model_dir);
  // The settings a search reads back are checked now, where the model and the field can be named,
  // instead of failing the first search. (Listing models reads the manifest alone and shows them as
  // they are.)
  for (const char* field : {"alpha", "sparsity_scale"}) {
    manifest.recorded_search_setting(field, join_path(model_dir, "manifest.json"));
  }
  auto model = std::make_unique<TorchTextModel>(model_dir, manifest, config.int8);
  return std::shared_ptr<Encoder>(new Encoder(model_dir, std::move(manifest), std::move(model)));
}

Encoding Encoder::tokenize(std::string_view text, std::size_t max_length) const {
  return model_->tokenizer().encode(text, max_length);
}

namespace {

std::string checksum_prefix(const ModelManifest& manifest, const std::string& file) {
  auto sha = manifest.files.find(file);
  return sha == manifest.files.end() ? std::string("unverified") : sha->second.substr(0, 12);
}

// "name@weights[+head]": the whole identity before the settings were part of it (it named the
// manifest's model_file even when the int8 weights were loaded). Indexes, caches and Milvus
// collections written then record this; the model's files still decide whether they match.
std::string identity_before_settings(const ModelManifest& manifest) {
  // Two models may share a network and differ only in their heads.
  return manifest.name + "@" + checksum_prefix(manifest, manifest.model_file) +
         (manifest.head_file.empty() ? "" : "+" + checksum_prefix(manifest, manifest.head_file));
}

// One field of recorded settings against this model's, as a user reads it: "pooling mean" on the
// index's side, "model X pools cls" on the model's.
std::string describe_setting(const std::string& field, const nlohmann::json& value) {
  const std::string shown = value.is_string() ? "'" + value.get<std::string>() + "'" : value.dump();
  if (field == "pooling" && value.is_string()) return "pooling " + value.get<std::string>();
  return field + " " + shown;
}

}  // namespace

std::string Encoder::settings() const {
  const auto checksum = [&](const std::string& file) { return file.empty() ? std::string() : checksum_prefix(manifest_, file); };
  // Keys sort in nlohmann's objects, so the text (and the identity's digest of it) is canonical.
  const nlohmann::json settings = {
      {"weights", model_->network_file()},
      {"weights_sha256", checksum(model_->network_file())},
      {"head", manifest_.head_file},
      {"head_sha256", checksum(manifest_.head_file)},
      {"tokenizer", manifest_.tokenizer_kind + " " + manifest_.tokenizer_file},
      {"tokenizer_sha256", checksum(manifest_.tokenizer_file)},
      {"lowercase", manifest_.lowercase},
      {"pooling", to_string(manifest_.pooling)},
      {"max_length", manifest_.max_length},
      {"query_prefix", manifest_.query_prefix},
      {"document_prefix", manifest_.document_prefix},
      {"normalized", manifest_.normalized}};
  // BERT's specials are left out, so that identities recorded before models named their specials
  // (every index and cache of a BERT model) still match; any other specials change the ids.
  if (!manifest_.specials.is_bert()) {
    nlohmann::json with_specials = settings;
    with_specials["tokenizer_specials"] = manifest_.to_json()["tokenizer"];
    return with_specials.dump();
  }
  return settings.dump();
}

std::string Encoder::identity() const {
  return manifest_.name + "@" + checksum_prefix(manifest_, model_->network_file()) +
         (manifest_.head_file.empty() ? "" : "+" + checksum_prefix(manifest_, manifest_.head_file)) + "#" +
         sha256_hex(settings()).substr(0, 12);
}

std::string Encoder::identity_mismatch(const std::string& recorded_identity, const std::string& recorded_settings,
                                       const std::string& owner) const {
  const std::string mine = identity();
  if (recorded_identity == mine) return "";
  const std::size_t at = recorded_identity.rfind('@');
  const bool before_settings = at != std::string::npos && recorded_identity.find('#', at) == std::string::npos;
  if (before_settings && recorded_identity == identity_before_settings(manifest_)) return "";

  const std::string model = "model " + manifest_.name;
  const std::string recorded_name = recorded_identity.substr(0, at);
  if (recorded_name != manifest_.name) {
    return owner + " was built with model " + recorded_name + ", not " + manifest_.name;
  }
  nlohmann::json theirs;
  try {
    theirs = recorded_settings.empty() ? nlohmann::json() : nlohmann::json::parse(recorded_settings);
  } catch (const nlohmann::json::exception&) {
  }
  std::string fields;
  if (theirs.is_object()) {
    const nlohmann::json ours = nlohmann::json::parse(settings());
    for (const auto& [field, value] : ours.items()) {
      const auto recorded = theirs.find(field);
      if (recorded == theirs.end() || *recorded == value) continue;
      const std::string side = field == "pooling" && value.is_string() ? model + " pools " + value.get<std::string>()
                                                                        : model + " has " + describe_setting(field, value);
      fields += (fields.empty() ? "" : "; ") + owner + " was built with " + describe_setting(field, *recorded) + "; " + side;
    }
  }
  if (!fields.empty()) return fields;
  return owner + " was built with " + recorded_identity + ", another version of " + manifest_.name +
         " (other weights or settings)";
}

Matrix Encoder::encode(const std::vector<std::string>& texts, const EncodeOptions& options,
                       EncodeReport* report) const {
  Matrix out(texts.size(), manifest_.embedding_dim);
  EncodeReport local;
  local.texts = texts.size();
  const std::string& prefix = prefix_for(manifest_, options);
  c10::InferenceMode guard;
  std::lock_guard<std::mutex> lock(model_->mutex());
  for_each_batch(*model_, texts, prefix, options, "encode", &local,
                 [&](const TokenBatch& batch, const std::vector<std::size_t>& positions) {
                   scatter_rows(model_->apply_head(model_->pooled_features(batch), false), options.normalize, positions,
                                manifest_.name, out);
                 });
  if (report) *report = local;
  return out;
}

Matrix Encoder::pooled_features(const std::vector<std::string>& texts, const EncodeOptions& options) const {
  Matrix out(texts.size(), model_->pooled_width());
  const std::string& prefix = prefix_for(manifest_, options);
  c10::InferenceMode guard;
  std::lock_guard<std::mutex> lock(model_->mutex());
  for_each_batch(*model_, texts, prefix, options, "encode", nullptr,
                 [&](const TokenBatch& batch, const std::vector<std::size_t>& positions) {
                   scatter_rows(model_->pooled_features(batch), false, positions, manifest_.name, out);
                 });
  return out;
}

Matrix Encoder::rows_from_features(MatrixView features, bool normalize) const {
  if (features.cols != model_->pooled_width()) {
    throw InvalidArgument("pooled features of " + manifest_.name + " are " + std::to_string(model_->pooled_width()) +
                          " wide, got " + std::to_string(features.cols));
  }
  Matrix out(features.rows, manifest_.embedding_dim);
  if (features.rows == 0) return out;
  c10::InferenceMode guard;
  std::lock_guard<std::mutex> lock(model_->mutex());
  const torch::Tensor input =
      torch::from_blob(const_cast<float*>(features.data), {int64_t(features.rows), int64_t(features.cols)},
                       torch::kFloat32);
  std::vector<std::size_t> positions(features.rows);
  std::iota(positions.begin(), positions.end(), 0);
  scatter_rows(model_->apply_head(input, false), normalize, positions, manifest_.name, out);
  return out;
}

std::size_t Encoder::pooled_width() const { return model_->pooled_width(); }

std::string Encoder::feature_key(const EncodeOptions& options) const {
  const auto sha = [&](const std::string& file) {
    auto it = manifest_.files.find(file);
    return it == manifest_.files.end() ? std::string("unverified:") + file : it->second;
  };
  // Every field is length-prefixed so that no two settings spell the same key.
  std::string description;
  const auto add = [&](const std::string& field) { description += std::to_string(field.size()) + ":" + field + ";"; };
  add("counterpoint-features/1");
  add(sha(model_->network_file()));
  add(manifest_.tokenizer_kind);
  add(sha(manifest_.tokenizer_file));
  add(manifest_.lowercase ? "lowercase" : "cased");
  add(to_string(manifest_.pooling));
  add(std::to_string(manifest_.max_length));
  add(prefix_for(manifest_, options));
  // Added only when not BERT's, so caches written before models named their specials stay valid.
  if (!manifest_.specials.is_bert()) add(manifest_.to_json()["tokenizer"].dump());
  return sha256_hex(description);
}

bool Encoder::shares_network_with(const Encoder& other) const {
  const ModelManifest& a = manifest_;
  const ModelManifest& b = other.manifest_;
  const auto sha = [](const ModelManifest& m, const std::string& file) {
    auto it = m.files.find(file);
    return it == m.files.end() ? std::string() : it->second;
  };
  const std::string network = sha(a, model_->network_file());
  return !network.empty() && model_->network_file() == other.model_->network_file() &&
         network == sha(b, other.model_->network_file()) && a.tokenizer_kind == b.tokenizer_kind &&
         !sha(a, a.tokenizer_file).empty() && sha(a, a.tokenizer_file) == sha(b, b.tokenizer_file) &&
         a.lowercase == b.lowercase && a.specials == b.specials && a.pooling == b.pooling &&
         a.max_length == b.max_length &&
         a.query_prefix == b.query_prefix && a.document_prefix == b.document_prefix;
}

std::pair<Matrix, Matrix> Encoder::encode_both(const Encoder& dense, const Encoder& sparse,
                                               const std::vector<std::string>& texts, const EncodeOptions& options) {
  if (!dense.shares_network_with(sparse)) return {dense.encode(texts, options), sparse.encode(texts, options)};
  Matrix e(texts.size(), dense.dim()), es(texts.size(), sparse.dim());
  const std::string& prefix = prefix_for(dense.manifest_, options);
  c10::InferenceMode guard;
  // One network runs (dense's); sparse contributes only its head, read under its own lock.
  std::unique_lock<std::mutex> dense_lock(dense.model_->mutex(), std::defer_lock);
  std::unique_lock<std::mutex> sparse_lock(sparse.model_->mutex(), std::defer_lock);
  if (&dense == &sparse) {
    dense_lock.lock();
  } else {
    std::lock(dense_lock, sparse_lock);
  }
  for_each_batch(*dense.model_, texts, prefix, options, "encode", nullptr,
                 [&](const TokenBatch& batch, const std::vector<std::size_t>& positions) {
    const torch::Tensor features = dense.model_->pooled_features(batch);
    scatter_rows(dense.model_->apply_head(features, false), options.normalize, positions, dense.manifest_.name, e);
    scatter_rows(sparse.model_->apply_head(features, false), options.normalize, positions, sparse.manifest_.name, es);
  });
  return {std::move(e), std::move(es)};
}

std::vector<Matrix> Encoder::encode_tokens(const std::vector<std::string>& texts,
                                           const EncodeOptions& options, EncodeReport* report) const {
  std::vector<Matrix> out(texts.size());
  EncodeReport local;
  local.texts = texts.size();
  const std::string& prefix = prefix_for(manifest_, options);
  c10::InferenceMode guard;
  std::lock_guard<std::mutex> lock(model_->mutex());
  for_each_batch(*model_, texts, prefix, options, "encode_tokens", &local,
                 [&](const TokenBatch& batch, const std::vector<std::size_t>& positions) {
    torch::Tensor states = model_->token_states(batch).to(torch::kFloat32);
    require_normalisable(states, batch.attention_mask.to(torch::kBool), manifest_.name,
                         "non-finite token states or ones");
    states = l2_normalize(states, 2);
    auto lengths = batch.attention_mask.sum(1);
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const int64_t n = lengths[int64_t(i)].item<int64_t>();
      torch::Tensor rows = states[int64_t(i)].slice(0, 0, n).contiguous();
      Matrix m(std::size_t(n), manifest_.token_dim);
      std::copy(rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel(), m.data());
      out[positions[i]] = std::move(m);
    }
  });
  if (report) *report = local;
  return out;
}

}  // namespace counterpoint
