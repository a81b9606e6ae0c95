// counterpoint/index/document_index.h: the document store and dense stage 1.
// DocumentIndex owns, per document, the caller's string id, its text, its dense embedding
// (E), optionally its sparse-aware embedding (Es, float32 or float16) and optionally its
// per-token embeddings; the FAISS index that searches E by inner product; the BM25 postings
// kept in sync with it; and saving/loading all of that as one directory.
//
// Slots. Every added document gets a slot (0, 1, 2, ... in order of addition) that is both
// its row in the stored matrices and its FAISS label. Slots are never reused: remove()
// marks a slot dead (its id may then be added again, under a new slot) and keeps its rows
// until the index is rebuilt, so slots stay stable for the life of the object and across
// save/load. Removed slots never appear in search results: every FAISS search gets an
// IDSelector over the live bitmap while any slot is dead (FAISS 1.7.3 applies it inside
// flat, IVF and HNSW search; HNSW still walks dead nodes, so after heavy removal rebuild).
//
// Concurrency. Any number of threads may call const methods (search, accessors) at once;
// add, remove and train are exclusive (a writer-preferring read/write lock inside); save holds the shared
// side, so it runs alongside searches but never alongside a change. Pointers, views
// and references returned by accessors stay valid until the next add, remove, train or load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "counterpoint/core/matrix.h"
#include "counterpoint/index/bm25.h"

namespace counterpoint::index {

// Same type as faiss::Index::idx_t; -1 marks "no document".
using Slot = std::int64_t;

struct IndexOptions {
  enum class SparseStorage { kFloat32, kFloat16 };

  std::size_t dim = 0;         // width of E, >= 1
  std::size_t sparse_dim = 0;  // width of Es; 0 = no Es stored
  // float16 halves Es memory; stage 2 scores the half rows in place, and their sparsity differs
  // from float32 storage by about 1e-3 at most (half keeps 11 significant bits).
  SparseStorage sparse_storage = SparseStorage::kFloat32;

  // "flat" (exact inner product), "hnsw", "ivf" (IVF-Flat) or "ivfpq".
  std::string kind = "flat";
  int hnsw_m = 32;
  int hnsw_ef_construction = 200;
  int hnsw_ef_search = 256;  // default when SearchParams::ef_search == 0; never below k
  // IVF lists; 0 = chosen at training time as clamp(sqrt(n), 1, n / 39) for n training
  // rows (FAISS wants >= 39 training rows per centroid; k-means samples <= 64 per list).
  int ivf_nlist = 0;
  int ivf_nprobe = 0;  // default when SearchParams::nprobe == 0; 0 = ceil(nlist / 8)
  int pq_m = 16;       // sub-quantizers; must divide dim
  int pq_bits = 8;     // bits per sub-quantizer code, 1..16

  // Dense rows and queries are L2-normalised on the way in, so inner product = cosine.
  bool normalize_dense = true;

  bool store_token_embeddings = false;
  std::size_t token_dim = 0;  // width of token embeddings, >= 1 when stored

  bool build_bm25 = true;
  Bm25Options bm25;

  // Encoder::identity() of the models whose rows the index holds ("" = not recorded, as in
  // indexes written before these fields existed). Retrieval refuses other models.
  std::string encoder_id;
  std::string sparse_encoder_id;
  // Encoder::settings() of those models (JSON text; "" = not recorded, as in indexes written
  // before): what lets a mismatch name the field that differs.
  std::string encoder_settings;
  std::string sparse_encoder_settings;
};

// Per-call parameters of the approximate kinds. A kind refuses the other's (check_params): set,
// it would change nothing, as FAISS refuses another index type's SearchParameters.
struct SearchParams {
  int ef_search = 0;  // HNSW only; 0 = IndexOptions::hnsw_ef_search
  int nprobe = 0;     // IVF kinds only; 0 = IndexOptions::ivf_nprobe
};

// FAISS-style batch-first result of nq queries: row q holds the k best slots of query q,
// best first, with their inner products; missing entries are slot -1, score -infinity.
struct SearchResult {
  std::size_t num_queries = 0;
  std::size_t k = 0;
  std::vector<float> scores;  // num_queries * k
  std::vector<Slot> slots;    // num_queries * k
  // True when the scores are the cosines of the (normalised) queries and rows, as
  // scoring::cosine_scores gives them up to float rounding: an exact scan of normalised rows
  // (flat, IVF-Flat). False for IVF-PQ's approximations, HNSW and unnormalised rows, whose
  // candidates' cosines the retriever computes from the stored rows.
  bool scores_are_cosines = false;
  Slot slot(std::size_t query, std::size_t rank) const { return slots[query * k + rank]; }
  float score(std::size_t query, std::size_t rank) const { return scores[query * k + rank]; }
};

class DocumentIndex {
 public:
  // Throws InvalidArgument naming the option that is out of range.
  explicit DocumentIndex(IndexOptions options);
  ~DocumentIndex();
  DocumentIndex(DocumentIndex&&) noexcept;
  DocumentIndex& operator=(DocumentIndex&&) noexcept;
  DocumentIndex(const DocumentIndex&) = delete;
  DocumentIndex& operator=(const DocumentIndex&) = delete;

  const IndexOptions& options() const;

  // Adds one document per row: its text, id (data first, as FAISS add_with_ids(x, ids) and the
  // Python Index.add(texts, ids)), E row and Es row. `sparse` must have sparse_dim columns (rows 0 when the index
  // stores no Es); `token_embeddings` one matrix of token_dim columns per document when
  // store_token_embeddings is set, otherwise empty. Everything is validated before anything
  // changes: row counts, widths, NaN/Inf, empty ids, invalid UTF-8, ids repeated within the
  // batch or already present (InvalidArgument naming the id). IVF kinds train themselves on
  // all stored rows once there are min_training_rows(); until then search is exact.
  void add(const std::vector<std::string>& texts, const std::vector<std::string>& ids,
           MatrixView dense, MatrixView sparse = {},
           const std::vector<Matrix>& token_embeddings = {});
  // Removes the documents; an unknown or repeated id throws InvalidArgument naming it and
  // removes nothing.
  void remove(const std::vector<std::string>& ids);
  // IVF kinds: (re)trains the quantizers on `sample` (dim columns, at least
  // required_training_rows()) and re-adds every stored row. Other kinds need no training.
  void train(MatrixView sample);
  bool is_trained() const;
  // Rows an explicit train() needs at least, and rows at which add() trains by itself.
  std::size_t required_training_rows() const;
  std::size_t min_training_rows() const;

  std::size_t size() const;           // live documents
  std::size_t slot_capacity() const;  // slots ever assigned (live and removed)
  // Changes with every add, remove or train, and differs between index objects: what a caller
  // derived from the index (retrieval::Retriever::CandidateSet) is current while it is unchanged.
  std::uint64_t generation() const;
  bool contains(const std::string& id) const;
  std::optional<Slot> slot_of(const std::string& id) const;
  bool is_live(Slot slot) const;
  std::vector<Slot> live_slots() const;  // ascending
  // Calls fn(slot) for each live slot in ascending order, under the shared lock (fn must
  // not call add/remove/train/save on this index).
  void for_each_live(const std::function<void(Slot)>& fn) const;

  // Top-k slots by inner product for each query row (dim columns, finite). k >= 1; k may
  // exceed size(). Removed slots never appear.
  SearchResult search(MatrixView queries, std::size_t k, const SearchParams& params = {}) const;
  // InvalidArgument for a negative parameter, or one this kind never reads (efSearch on a flat or
  // IVF index, nprobe on a flat or HNSW one). search calls it; faces call it before encoding queries.
  void check_params(const SearchParams& params) const;

  // Stage-2 accessors. A slot that is out of range or removed throws InvalidArgument.
  const std::string& id(Slot slot) const;
  const std::string& text(Slot slot) const;
  const float* dense_row(Slot slot) const;  // dim floats (normalised when normalize_dense)
  // Copies rows of `slots` into out (n * dim, resp. n * sparse_dim floats, row i = slots[i]);
  // Es stored as float16 is widened to float32. All slots are checked before writing.
  void gather_dense(const Slot* slots, std::size_t n, float* out) const;
  void gather_sparse(const Slot* slots, std::size_t n, float* out) const;
  // The stored Es rows, for stage 2 to score in place (scoring::sparsity_scores_gather*): one of
  // f32 / f16 (IEEE half bits) is set, `rows` x `dim`, row s = slot s (removed slots included).
  struct SparseTable {
    const float* f32 = nullptr;
    const std::uint16_t* f16 = nullptr;
    std::size_t rows = 0, dim = 0;
  };
  // Checks every slot as gather_sparse does, then calls use(table) under the shared lock: the
  // table is valid only inside the call. InvalidArgument when the index stores no Es.
  void with_sparse_table(const Slot* slots, std::size_t n, const std::function<void(const SparseTable&)>& use) const;
  // The document's token embeddings (token_dim columns); InvalidArgument if not stored.
  MatrixView token_embeddings(Slot slot) const;

  // Lexical stage 1 over the same slots; InvalidArgument when built without BM25.
  bool has_bm25() const;
  std::vector<Bm25Hit> search_bm25(const std::string& query, std::size_t k) const;
  std::vector<float> score_bm25(const std::string& query, const std::vector<Slot>& slots) const;

  // Writes the whole index into directory `dir`, atomically replacing what was there: a
  // failed save leaves the previous content intact and an interrupted one never leaves a
  // directory that loads. Throws IoError on file-system failures.
  // Saves also remove what saves of the same directory killed part-way left beside it.
  void save(const std::string& dir) const;
  // IoError, before any work, when save(dir) could not write there (the path is a file, its
  // parent cannot be created or is not writable): callers check it before encoding a corpus.
  static void require_saveable(const std::string& dir);
  // Reads an index written by save(). FileNotFound if `dir` does not exist; CorruptFile
  // naming the file and the mismatch for a wrong format/version, missing or truncated
  // section, checksum mismatch or inconsistent sizes. A save of `dir` by another thread or
  // process while this reads gives the old index or the new one, never a mix: the load holds
  // the files of the version it opened from just after reading its header. IoError when saves
  // replaced `dir` before its files were open at each of 8 attempts (a load never waits on end).
  static DocumentIndex load(const std::string& dir);

  // Bytes held in memory by stored rows, texts and the FAISS index (approximate).
  std::size_t memory_bytes() const;

 struct State;  // opaque; defined in src/index

 private:
  explicit DocumentIndex(std::unique_ptr<State> state);
  // load()'s reading of the directory `dir` open as `dirfd`: every file is opened relative to it.
  static DocumentIndex load_directory(const std::string& dir, int dirfd);
  std::unique_ptr<State> state_;
};

}  // namespace counterpoint::index
