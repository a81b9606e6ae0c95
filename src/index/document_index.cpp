#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/spelling.h"
#include "counterpoint/text/words.h"
#include "document_index_state.h"
#include "exact_search.h"

namespace counterpoint::index {

namespace {

constexpr float kFloat16Max = 65504.0f;
constexpr std::size_t kMaxWidth = std::size_t(1) << 20;

std::string quoted(const std::string& id) { return "'" + id + "'"; }

void require_non_negative(int value, const char* name) {
  if (value < 0) throw InvalidArgument(std::string(name) + " must be >= 0, got " + std::to_string(value));
}

void require_positive(int value, const char* name) {
  if (value < 1) throw InvalidArgument(std::string(name) + " must be >= 1, got " + std::to_string(value));
}

// Copies rows, L2-normalising them when asked (rows of norm 0 stay zero).
// L2-normalises n rows of width d in place (zero rows stay zero).
void normalize_in_place(float* rows, std::size_t n, std::size_t d) {
  for (std::size_t r = 0; r < n; ++r) {
    float* row = rows + r * d;
    double sq = 0.0;
    for (std::size_t c = 0; c < d; ++c) sq += double(row[c]) * row[c];
    if (sq > 0.0) {
      const float inv = float(1.0 / std::sqrt(sq));
      for (std::size_t c = 0; c < d; ++c) row[c] *= inv;
    }
  }
}

// A normalised copy of m (or a plain copy).
std::vector<float> prepared_rows(MatrixView m, bool normalize) {
  std::vector<float> out(m.data, m.data + m.rows * m.cols);
  if (normalize) normalize_in_place(out.data(), m.rows, m.cols);
  return out;
}

// Rows reach a flat or HNSW FAISS index this many at a time, normalised in a buffer of this
// size: a copy of the whole batch held 1M x 512 rows (2 GB) twice during add().
constexpr std::size_t kAddChunkRows = 16384;

template <typename Fn>
auto faiss_call(const char* what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const faiss::FaissException& e) {
    throw Error(std::string("FAISS failed to ") + what + ": " + e.what());
  }
}

}  // namespace

IndexKind parse_index_kind(const std::string& typed) {
  const std::string kind = ascii_lower(typed);
  if (kind == "flat") return IndexKind::kFlat;
  if (kind == "hnsw") return IndexKind::kHnsw;
  if (kind == "ivf") return IndexKind::kIvf;
  if (kind == "ivfpq") return IndexKind::kIvfPq;
  throw InvalidArgument("index kind '" + typed + "' is not one of flat, hnsw, ivf, ivfpq" +
                        did_you_mean(typed, {"flat", "hnsw", "ivf", "ivfpq"}));
}

// ---- State ------------------------------------------------------------------

const float* DocumentIndex::State::dense_base() const {
  switch (kind) {
    case IndexKind::kFlat:
      return static_cast<const faiss::IndexFlat*>(faiss.get())->get_xb();
    case IndexKind::kHnsw:
      return static_cast<const faiss::IndexFlat*>(static_cast<const faiss::IndexHNSW*>(faiss.get())->storage)
          ->get_xb();
    default:
      return dense_rows.data();
  }
}

void DocumentIndex::State::create_faiss() {
  const auto d = faiss::Index::idx_t(options.dim);
  if (kind == IndexKind::kFlat) {
    faiss = std::make_unique<faiss::IndexFlatIP>(d);
  } else if (kind == IndexKind::kHnsw) {
    auto hnsw = std::make_unique<faiss::IndexHNSWFlat>(int(d), options.hnsw_m, faiss::METRIC_INNER_PRODUCT);
    hnsw->hnsw.efConstruction = options.hnsw_ef_construction;
    hnsw->hnsw.efSearch = options.hnsw_ef_search;
    faiss = std::move(hnsw);
  }
}

std::size_t DocumentIndex::State::required_training_rows() const {
  std::size_t rows = std::max<std::size_t>(1, std::size_t(options.ivf_nlist));
  if (kind == IndexKind::kIvfPq) rows = std::max(rows, std::size_t(1) << options.pq_bits);
  return rows;
}

std::size_t DocumentIndex::State::min_training_rows() const {
  std::size_t rows = std::max<std::size_t>(1024, 39 * std::size_t(options.ivf_nlist));
  if (kind == IndexKind::kIvfPq) rows = std::max(rows, 39 * (std::size_t(1) << options.pq_bits));
  return rows;
}

void DocumentIndex::State::train_ivf(const float* sample, std::size_t n) {
  std::size_t nlist = std::size_t(options.ivf_nlist);
  if (nlist == 0) {
    const auto by_sqrt = std::size_t(std::lround(std::sqrt(double(n))));
    nlist = std::max<std::size_t>(1, std::min(by_sqrt, n / 39));
  }
  const std::size_t d = options.dim;
  auto quantizer = std::make_unique<faiss::IndexFlatIP>(faiss::Index::idx_t(d));
  std::unique_ptr<faiss::IndexIVF> ivf;
  if (kind == IndexKind::kIvf) {
    ivf = std::make_unique<faiss::IndexIVFFlat>(quantizer.get(), d, nlist, faiss::METRIC_INNER_PRODUCT);
  } else {
    ivf = std::make_unique<faiss::IndexIVFPQ>(quantizer.get(), d, nlist, std::size_t(options.pq_m),
                                              std::size_t(options.pq_bits), faiss::METRIC_INNER_PRODUCT);
  }
  ivf->own_fields = true;
  // k-means on at most 64 rows per list keeps training minutes-cheap on one core at 1M rows.
  ivf->cp.max_points_per_centroid = 64;
  quantizer.release();
  ivf->nprobe = options.ivf_nprobe > 0 ? std::size_t(options.ivf_nprobe) : (nlist + 7) / 8;
  ivf->nprobe = std::min(ivf->nprobe, nlist);
  faiss_call("train the IVF index", [&] { ivf->train(faiss::Index::idx_t(n), sample); });
  if (slots > 0) {
    std::vector<faiss::Index::idx_t> labels(slots);
    for (std::size_t s = 0; s < slots; ++s) labels[s] = faiss::Index::idx_t(s);
    faiss_call("add rows", [&] { ivf->add_with_ids(faiss::Index::idx_t(slots), dense_rows.data(), labels.data()); });
  }
  faiss = std::move(ivf);
}

// ---- DocumentIndex ----------------------------------------------------------

DocumentIndex::DocumentIndex(IndexOptions options) : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.kind = parse_index_kind(options.kind);
  options.kind = ascii_lower(options.kind);  // "HNSW" is saved and described as "hnsw"
  if (options.dim == 0 || options.dim > kMaxWidth) {
    throw InvalidArgument("IndexOptions::dim must be in [1, " + std::to_string(kMaxWidth) + "], got " +
                          std::to_string(options.dim));
  }
  if (options.sparse_dim > kMaxWidth) {
    throw InvalidArgument("IndexOptions::sparse_dim must be <= " + std::to_string(kMaxWidth));
  }
  require_positive(options.hnsw_m, "IndexOptions::hnsw_m");
  require_positive(options.hnsw_ef_construction, "IndexOptions::hnsw_ef_construction");
  require_positive(options.hnsw_ef_search, "IndexOptions::hnsw_ef_search");
  require_non_negative(options.ivf_nlist, "IndexOptions::ivf_nlist");
  require_non_negative(options.ivf_nprobe, "IndexOptions::ivf_nprobe");
  if (st.kind == IndexKind::kIvfPq) {
    require_positive(options.pq_m, "IndexOptions::pq_m");
    if (options.dim % std::size_t(options.pq_m) != 0) {
      throw InvalidArgument("IndexOptions::pq_m (" + std::to_string(options.pq_m) + ") must divide dim (" +
                            std::to_string(options.dim) + ")");
    }
    if (options.pq_bits < 1 || options.pq_bits > 16) {
      throw InvalidArgument("IndexOptions::pq_bits must be in [1, 16], got " + std::to_string(options.pq_bits));
    }
  }
  if (options.store_token_embeddings && (options.token_dim == 0 || options.token_dim > kMaxWidth)) {
    throw InvalidArgument("IndexOptions::token_dim must be in [1, " + std::to_string(kMaxWidth) +
                          "] when store_token_embeddings is set");
  }
  if (!options.store_token_embeddings) options.token_dim = 0;
  if (options.build_bm25) st.bm25.emplace(options.bm25);
  st.options = std::move(options);
  st.create_faiss();
}

DocumentIndex::DocumentIndex(std::unique_ptr<State> state) : state_(std::move(state)) {}
DocumentIndex::~DocumentIndex() = default;
DocumentIndex::DocumentIndex(DocumentIndex&&) noexcept = default;
DocumentIndex& DocumentIndex::operator=(DocumentIndex&&) noexcept = default;

const IndexOptions& DocumentIndex::options() const { return state_->options; }

void DocumentIndex::add(const std::vector<std::string>& texts, const std::vector<std::string>& ids,
                        MatrixView dense, MatrixView sparse, const std::vector<Matrix>& token_embeddings) {
  State& st = *state_;
  const IndexOptions& opt = st.options;
  const std::size_t n = ids.size();
  // ---- validate everything first ----
  if (texts.size() != n) {
    throw InvalidArgument("add: " + std::to_string(n) + " ids but " + std::to_string(texts.size()) + " texts");
  }
  if (dense.rows != n) {
    throw InvalidArgument("add: " + std::to_string(n) + " ids but " + std::to_string(dense.rows) + " dense rows");
  }
  if (n > 0) {
    require_width(dense, opt.dim, "dense embeddings");
    require_finite(dense, "dense embeddings");
  }
  if (opt.sparse_dim == 0) {
    if (sparse.rows != 0) throw InvalidArgument("add: sparse embeddings given but the index has sparse_dim 0");
  } else {
    if (sparse.rows != n) {
      throw InvalidArgument("add: " + std::to_string(n) + " ids but " + std::to_string(sparse.rows) +
                            " sparse rows (sparse_dim " + std::to_string(opt.sparse_dim) + ")");
    }
    if (n > 0) {
      require_width(sparse, opt.sparse_dim, "sparse embeddings");
      require_finite(sparse, "sparse embeddings");
      if (opt.sparse_storage == IndexOptions::SparseStorage::kFloat16) {
        for (std::size_t i = 0; i < n * opt.sparse_dim; ++i) {
          if (std::fabs(sparse.data[i]) > kFloat16Max) {
            throw InvalidArgument("add: sparse embedding value " + std::to_string(sparse.data[i]) + " of row " +
                                  std::to_string(i / opt.sparse_dim) + " exceeds the float16 range");
          }
        }
      }
    }
  }
  if (opt.store_token_embeddings) {
    if (token_embeddings.size() != n) {
      throw InvalidArgument("add: " + std::to_string(n) + " ids but " + std::to_string(token_embeddings.size()) +
                            " token embedding matrices (the index stores token embeddings)");
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::string what = "token embeddings of " + quoted(ids[i]);
      if (token_embeddings[i].rows() > 0) require_width(token_embeddings[i].view(), opt.token_dim, what.c_str());
      require_finite(token_embeddings[i].view(), what.c_str());
    }
  } else if (!token_embeddings.empty()) {
    throw InvalidArgument("add: token embeddings given but the index was built without store_token_embeddings");
  }
  std::vector<std::vector<std::string>> analyzed(st.bm25 ? n : 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (ids[i].empty()) throw InvalidArgument("add: document " + std::to_string(i) + " has an empty id");
    try {
      if (st.bm25) {
        analyzed[i] = st.bm25->analyze(texts[i]);
      } else {
        text::alphanumeric_words(texts[i]);
      }
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("add: text of " + quoted(ids[i]) + ": " + e.what());
    }
  }
  std::unique_lock lock(st.mutex);
  {
    std::unordered_set<std::string> batch;
    for (const std::string& id : ids) {
      if (!batch.insert(id).second) throw InvalidArgument("add: id " + quoted(id) + " appears twice in the batch");
      if (st.slot_by_id.count(id)) throw InvalidArgument("add: id " + quoted(id) + " is already in the index");
    }
  }
  if (n == 0) return;

  // ---- commit ----
  const std::size_t first = st.slots;
  const std::size_t d = opt.dim;
  if (st.is_ivf()) {
    // The IVF kinds keep every row themselves (for retraining): normalised there, in place, and
    // handed to FAISS from there, so the batch is copied once.
    const std::size_t before = st.dense_rows.size();
    st.dense_rows.insert(st.dense_rows.end(), dense.data, dense.data + n * d);
    float* added = st.dense_rows.data() + before;
    if (opt.normalize_dense) normalize_in_place(added, n, d);
    if (st.faiss) {
      std::vector<faiss::Index::idx_t> labels(n);
      for (std::size_t i = 0; i < n; ++i) labels[i] = faiss::Index::idx_t(first + i);
      try {
        faiss_call("add rows", [&] { st.faiss->add_with_ids(faiss::Index::idx_t(n), added, labels.data()); });
      } catch (...) {
        st.dense_rows.resize(before);
        throw;
      }
    }
  } else {
    auto* flat = dynamic_cast<faiss::IndexFlatCodes*>(st.faiss.get());
    const faiss::Index::idx_t before = st.faiss->ntotal;
    // Chunks keep the transient copy small. HNSW gets the batch in one call, as its graph
    // depends on how points arrive; the flat codes are reserved first, so a failure to allocate
    // happens before any row is added, and a later failure is rolled back.
    const std::size_t chunk = flat ? kAddChunkRows : n;
    if (flat) flat->codes.reserve(flat->codes.size() + n * flat->code_size);
    std::vector<float> buffer(std::min(chunk, n) * d);
    try {
      for (std::size_t start = 0; start < n; start += chunk) {
        const std::size_t m = std::min(chunk, n - start);
        std::copy_n(dense.data + start * d, m * d, buffer.data());
        if (opt.normalize_dense) normalize_in_place(buffer.data(), m, d);
        faiss_call("add rows", [&] { st.faiss->add(faiss::Index::idx_t(m), buffer.data()); });
      }
    } catch (...) {
      if (flat) {
        flat->codes.resize(std::size_t(before) * flat->code_size);
        flat->ntotal = before;
      }
      throw;
    }
  }
  if (opt.sparse_dim > 0) {
    if (opt.sparse_storage == IndexOptions::SparseStorage::kFloat16) {
      st.sparse_f16.reserve(st.sparse_f16.size() + n * opt.sparse_dim);
      for (std::size_t i = 0; i < n * opt.sparse_dim; ++i) st.sparse_f16.emplace_back(sparse.data[i]);
    } else {
      st.sparse_f32.insert(st.sparse_f32.end(), sparse.data, sparse.data + n * opt.sparse_dim);
    }
  }
  if (opt.store_token_embeddings) {
    for (const Matrix& m : token_embeddings) {
      st.tokens.push_back(m.rows() > 0 ? m : Matrix(0, opt.token_dim));
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t slot = first + i;
    st.ids.push_back(ids[i]);
    st.texts.push_back(texts[i]);
    st.set_live(slot, true);
    st.slot_by_id.emplace(ids[i], Slot(slot));
    if (st.bm25) st.bm25->add_analyzed(Slot(slot), analyzed[i]);
  }
  st.slots += n;
  st.live += n;
  if (st.is_ivf() && !st.faiss && st.slots >= st.min_training_rows()) {
    st.train_ivf(st.dense_rows.data(), st.slots);
  }
  st.generation = next_generation();
}

void DocumentIndex::remove(const std::vector<std::string>& ids) {
  State& st = *state_;
  std::unique_lock lock(st.mutex);
  std::vector<Slot> doomed;
  std::unordered_set<std::string> seen;
  for (const std::string& id : ids) {
    auto it = st.slot_by_id.find(id);
    if (it == st.slot_by_id.end()) throw InvalidArgument("remove: unknown id " + quoted(id));
    if (!seen.insert(id).second) throw InvalidArgument("remove: id " + quoted(id) + " appears twice");
    doomed.push_back(it->second);
  }
  for (Slot s : doomed) {
    const auto slot = std::size_t(s);
    st.slot_by_id.erase(st.ids[slot]);
    st.set_live(slot, false);
    if (st.bm25) st.bm25->remove(s);
    std::string().swap(st.ids[slot]);
    std::string().swap(st.texts[slot]);
    if (st.options.store_token_embeddings) st.tokens[slot] = Matrix(0, st.options.token_dim);
    --st.live;
  }
  if (!doomed.empty()) st.generation = next_generation();
}

void DocumentIndex::train(MatrixView sample) {
  State& st = *state_;
  if (!st.is_ivf()) return;
  require_width(sample, st.options.dim, "training sample");
  require_finite(sample, "training sample");
  if (sample.rows < st.required_training_rows()) {
    throw InvalidArgument("train: " + st.options.kind + " index needs at least " +
                          std::to_string(st.required_training_rows()) + " training rows, got " +
                          std::to_string(sample.rows));
  }
  std::vector<float> rows = prepared_rows(sample, st.options.normalize_dense);
  std::unique_lock lock(st.mutex);
  st.train_ivf(rows.data(), sample.rows);
  st.generation = next_generation();
}

bool DocumentIndex::is_trained() const {
  std::shared_lock lock(state_->mutex);
  return !state_->is_ivf() || state_->faiss != nullptr;
}

std::size_t DocumentIndex::required_training_rows() const { return state_->is_ivf() ? state_->required_training_rows() : 0; }
std::size_t DocumentIndex::min_training_rows() const { return state_->is_ivf() ? state_->min_training_rows() : 0; }

std::size_t DocumentIndex::size() const {
  std::shared_lock lock(state_->mutex);
  return state_->live;
}

std::uint64_t next_generation() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

std::uint64_t DocumentIndex::generation() const {
  std::shared_lock lock(state_->mutex);
  return state_->generation;
}

std::size_t DocumentIndex::slot_capacity() const {
  std::shared_lock lock(state_->mutex);
  return state_->slots;
}

bool DocumentIndex::contains(const std::string& id) const {
  std::shared_lock lock(state_->mutex);
  return state_->slot_by_id.count(id) != 0;
}

std::optional<Slot> DocumentIndex::slot_of(const std::string& id) const {
  std::shared_lock lock(state_->mutex);
  auto it = state_->slot_by_id.find(id);
  if (it == state_->slot_by_id.end()) return std::nullopt;
  return it->second;
}

bool DocumentIndex::is_live(Slot slot) const {
  std::shared_lock lock(state_->mutex);
  return state_->is_live(slot);
}

std::vector<Slot> DocumentIndex::live_slots() const {
  std::vector<Slot> out;
  for_each_live([&](Slot s) { out.push_back(s); });
  return out;
}

void DocumentIndex::for_each_live(const std::function<void(Slot)>& fn) const {
  std::shared_lock lock(state_->mutex);
  for (std::size_t s = 0; s < state_->slots; ++s) {
    if (state_->is_live(Slot(s))) fn(Slot(s));
  }
}

void DocumentIndex::check_params(const SearchParams& params) const {
  const State& st = *state_;
  require_non_negative(params.ef_search, "SearchParams::ef_search");
  require_non_negative(params.nprobe, "SearchParams::nprobe");
  // As FAISS refuses parameters of another index type: a setting this kind never reads would
  // leave the caller believing the search was tuned.
  if (params.ef_search > 0 && st.kind != IndexKind::kHnsw) {
    throw InvalidArgument("ef_search applies to an hnsw index; this index is " + st.options.kind);
  }
  if (params.nprobe > 0 && st.kind != IndexKind::kIvf && st.kind != IndexKind::kIvfPq) {
    throw InvalidArgument("nprobe applies to an ivf or ivfpq index; this index is " + st.options.kind);
  }
}

SearchResult DocumentIndex::search(MatrixView queries, std::size_t k, const SearchParams& params) const {
  const State& st = *state_;
  if (k == 0) throw InvalidArgument("search: k must be >= 1");
  check_params(params);
  const std::size_t nq = queries.rows;
  if (nq > 0) {
    require_width(queries, st.options.dim, "queries");
    require_finite(queries, "queries");
  }
  if (nq != 0 && k > std::numeric_limits<std::size_t>::max() / 16 / nq) {
    throw InvalidArgument("search: k " + std::to_string(k) + " times " + std::to_string(nq) + " queries is too large");
  }
  SearchResult result;
  result.num_queries = nq;
  result.k = k;
  result.scores_are_cosines =
      st.options.normalize_dense && (st.kind == IndexKind::kFlat || st.kind == IndexKind::kIvf);
  result.scores.assign(nq * k, -std::numeric_limits<float>::infinity());
  result.slots.assign(nq * k, -1);
  if (nq == 0) return result;
  const std::vector<float> q = prepared_rows(queries, st.options.normalize_dense);

  std::shared_lock lock(st.mutex);
  if (st.live == 0) return result;
  const std::size_t k_eff = std::min(k, st.live);
  std::vector<float> distances(nq * k_eff);
  std::vector<faiss::Index::idx_t> labels(nq * k_eff, -1);
  std::optional<faiss::IDSelectorBitmap> live_only;
  if (st.live < st.slots) live_only.emplace(st.live_bits.size(), st.live_bits.data());
  const faiss::IDSelector* sel = live_only ? &*live_only : nullptr;
  const detail::LiveRows live_rows{live_only ? st.live_bits.data() : nullptr, st.live_bits.size()};
  const auto fk = faiss::Index::idx_t(k_eff);
  const auto fnq = faiss::Index::idx_t(nq);

  // Flat and IVF-Flat (and an untrained IVF's exact scan) search on the library's kernels and BLAS
  // (exact_search.h): Debian's FAISS computes their inner products in scalar code. HNSW and IVF-PQ
  // stay with FAISS (graph walk; PQ distance tables).
  const auto* ivf_flat = st.kind == IndexKind::kIvf ? dynamic_cast<const faiss::IndexIVFFlat*>(st.faiss.get()) : nullptr;
  faiss_call("search", [&] {
    if (!st.faiss) {  // untrained IVF: exact scan of the stored rows
      detail::exact_search(q.data(), nq, st.dense_rows.data(), st.slots, st.options.dim, k_eff, live_rows,
                           distances.data(), labels.data());
    } else if (st.kind == IndexKind::kFlat) {
      detail::exact_search(q.data(), nq, st.dense_base(), std::size_t(st.faiss->ntotal), st.options.dim, k_eff,
                           live_rows, distances.data(), labels.data());
    } else if (st.kind == IndexKind::kHnsw) {
      faiss::SearchParametersHNSW p;
      p.efSearch = std::max<int>(params.ef_search > 0 ? params.ef_search : st.options.hnsw_ef_search, int(k_eff));
      p.sel = const_cast<faiss::IDSelector*>(sel);
      st.faiss->search(fnq, q.data(), fk, distances.data(), labels.data(), &p);
    } else {
      const auto* ivf = static_cast<const faiss::IndexIVF*>(st.faiss.get());
      const std::size_t nprobe = params.nprobe > 0 ? std::min(std::size_t(params.nprobe), ivf->nlist) : ivf->nprobe;
      if (ivf_flat && detail::ivf_flat_search(*ivf_flat, q.data(), nq, nprobe, k_eff, live_rows, distances.data(),
                                              labels.data())) {
        return;
      }
      faiss::SearchParametersIVF p;
      p.nprobe = nprobe;
      p.sel = const_cast<faiss::IDSelector*>(sel);
      st.faiss->search(fnq, q.data(), fk, distances.data(), labels.data(), &p);
    }
  });
  for (std::size_t qi = 0; qi < nq; ++qi) {
    std::size_t out = 0;
    for (std::size_t r = 0; r < k_eff; ++r) {
      const faiss::Index::idx_t label = labels[qi * k_eff + r];
      if (label < 0 || !st.is_live(label)) continue;
      result.slots[qi * k + out] = label;
      result.scores[qi * k + out] = distances[qi * k_eff + r];
      ++out;
    }
  }
  return result;
}


namespace {

std::size_t checked_slot(const DocumentIndex::State& st, Slot slot, const char* what) {
  if (slot < 0 || std::size_t(slot) >= st.slots) {
    throw InvalidArgument(std::string(what) + ": slot " + std::to_string(slot) + " is out of range [0, " +
                          std::to_string(st.slots) + ")");
  }
  if (!st.is_live(slot)) throw InvalidArgument(std::string(what) + ": slot " + std::to_string(slot) + " was removed");
  return std::size_t(slot);
}

}  // namespace

const std::string& DocumentIndex::id(Slot slot) const {
  std::shared_lock lock(state_->mutex);
  return state_->ids[checked_slot(*state_, slot, "id")];
}

const std::string& DocumentIndex::text(Slot slot) const {
  std::shared_lock lock(state_->mutex);
  return state_->texts[checked_slot(*state_, slot, "text")];
}

const float* DocumentIndex::dense_row(Slot slot) const {
  std::shared_lock lock(state_->mutex);
  return state_->dense_base() + checked_slot(*state_, slot, "dense_row") * state_->options.dim;
}

void DocumentIndex::gather_dense(const Slot* slots, std::size_t n, float* out) const {
  const State& st = *state_;
  std::shared_lock lock(st.mutex);
  for (std::size_t i = 0; i < n; ++i) checked_slot(st, slots[i], "gather_dense");
  const std::size_t d = st.options.dim;
  const float* base = st.dense_base();
  for (std::size_t i = 0; i < n; ++i) std::copy_n(base + std::size_t(slots[i]) * d, d, out + i * d);
}

void DocumentIndex::gather_sparse(const Slot* slots, std::size_t n, float* out) const {
  const State& st = *state_;
  const std::size_t d = st.options.sparse_dim;
  if (d == 0) throw InvalidArgument("gather_sparse: the index stores no sparse embeddings (sparse_dim 0)");
  std::shared_lock lock(st.mutex);
  for (std::size_t i = 0; i < n; ++i) checked_slot(st, slots[i], "gather_sparse");
  if (st.options.sparse_storage == IndexOptions::SparseStorage::kFloat16) {
    for (std::size_t i = 0; i < n; ++i) {
      const Eigen::half* row = st.sparse_f16.data() + std::size_t(slots[i]) * d;
      float* dst = out + i * d;
      for (std::size_t c = 0; c < d; ++c) dst[c] = static_cast<float>(row[c]);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) std::copy_n(st.sparse_f32.data() + std::size_t(slots[i]) * d, d, out + i * d);
  }
}

void DocumentIndex::with_sparse_table(const Slot* slots, std::size_t n,
                                      const std::function<void(const SparseTable&)>& use) const {
  const State& st = *state_;
  const std::size_t d = st.options.sparse_dim;
  if (d == 0) throw InvalidArgument("with_sparse_table: the index stores no sparse embeddings (sparse_dim 0)");
  std::shared_lock lock(st.mutex);
  for (std::size_t i = 0; i < n; ++i) checked_slot(st, slots[i], "with_sparse_table");
  SparseTable table;
  table.dim = d;
  if (st.options.sparse_storage == IndexOptions::SparseStorage::kFloat16) {
    // Eigen::half is one IEEE binary16 value in a uint16_t, so the rows read as half bits.
    static_assert(sizeof(Eigen::half) == sizeof(std::uint16_t), "Eigen::half is not 16 bits");
    table.f16 = reinterpret_cast<const std::uint16_t*>(st.sparse_f16.data());
    table.rows = st.sparse_f16.size() / d;
  } else {
    table.f32 = st.sparse_f32.data();
    table.rows = st.sparse_f32.size() / d;
  }
  use(table);
}

MatrixView DocumentIndex::token_embeddings(Slot slot) const {
  const State& st = *state_;
  if (!st.options.store_token_embeddings) {
    throw InvalidArgument("token_embeddings: the index was built without store_token_embeddings");
  }
  std::shared_lock lock(st.mutex);
  return st.tokens[checked_slot(st, slot, "token_embeddings")].view();
}

bool DocumentIndex::has_bm25() const { return state_->bm25.has_value(); }

std::vector<Bm25Hit> DocumentIndex::search_bm25(const std::string& query, std::size_t k) const {
  if (!state_->bm25) throw InvalidArgument("search_bm25: the index was built without BM25 (build_bm25 false)");
  std::shared_lock lock(state_->mutex);
  return state_->bm25->search(query, k);
}

std::vector<float> DocumentIndex::score_bm25(const std::string& query, const std::vector<Slot>& slots) const {
  if (!state_->bm25) throw InvalidArgument("score_bm25: the index was built without BM25 (build_bm25 false)");
  std::shared_lock lock(state_->mutex);
  return state_->bm25->score(query, slots);
}

std::size_t DocumentIndex::memory_bytes() const {
  const State& st = *state_;
  std::shared_lock lock(st.mutex);
  std::size_t bytes = st.dense_rows.capacity() * sizeof(float) + st.sparse_f32.capacity() * sizeof(float) +
                      st.sparse_f16.capacity() * sizeof(Eigen::half) + st.live_bits.capacity();
  for (const Matrix& m : st.tokens) bytes += sizeof(Matrix) + m.values().capacity() * sizeof(float);
  for (std::size_t s = 0; s < st.slots; ++s) {
    bytes += 2 * sizeof(std::string) + st.ids[s].capacity() + st.texts[s].capacity();
  }
  if (st.faiss) {
    const std::size_t n = std::size_t(st.faiss->ntotal);
    switch (st.kind) {
      case IndexKind::kFlat:
        bytes += n * st.options.dim * sizeof(float);
        break;
      case IndexKind::kHnsw: {
        const auto& h = static_cast<const faiss::IndexHNSW*>(st.faiss.get())->hnsw;
        bytes += n * st.options.dim * sizeof(float) + h.neighbors.capacity() * sizeof(faiss::HNSW::storage_idx_t) +
                 h.offsets.capacity() * sizeof(std::size_t) + h.levels.capacity() * sizeof(int);
        break;
      }
      case IndexKind::kIvf:
        bytes += n * (st.options.dim * sizeof(float) + sizeof(faiss::Index::idx_t));
        break;
      case IndexKind::kIvfPq: {
        const auto* pq = static_cast<const faiss::IndexIVFPQ*>(st.faiss.get());
        bytes += n * (pq->code_size + sizeof(faiss::Index::idx_t));
        break;
      }
    }
  }
  return bytes;
}

}  // namespace counterpoint::index
