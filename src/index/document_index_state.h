// src/index: the private state of DocumentIndex, shared by its search/storage code
// (document_index.cpp) and its persistence code (index_storage.cpp).
#pragma once

#include <faiss/Index.h>
#include <pthread.h>

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "counterpoint/index/bm25.h"
#include "counterpoint/index/document_index.h"

namespace counterpoint::index {

// A reader/writer lock that lets a waiting writer in before new readers, so add/remove
// cannot starve behind a steady stream of searches (std::shared_mutex on glibc prefers
// readers). Meets the SharedMutex requirements used by std::unique_lock/std::shared_lock.
class WriterPreferringMutex {
 public:
  WriterPreferringMutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterPreferringMutex() { pthread_rwlock_destroy(&lock_); }
  WriterPreferringMutex(const WriterPreferringMutex&) = delete;
  WriterPreferringMutex& operator=(const WriterPreferringMutex&) = delete;
  void lock() { pthread_rwlock_wrlock(&lock_); }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

enum class IndexKind { kFlat, kHnsw, kIvf, kIvfPq };

// A value no index state has had before in this process: a new state's generation, and each
// add, remove or train's (DocumentIndex::generation).
std::uint64_t next_generation();

// Parses IndexOptions::kind; InvalidArgument for an unknown name.
IndexKind parse_index_kind(const std::string& kind);

struct DocumentIndex::State {
  IndexOptions options;
  IndexKind kind = IndexKind::kFlat;
  mutable WriterPreferringMutex mutex;

  // Holds every slot's E row under label = slot. Flat/HNSW: created at construction and its
  // flat storage is the only copy of E. IVF kinds: null until trained; E is kept in
  // dense_rows as well because IVF lists are not addressable by slot.
  std::unique_ptr<faiss::Index> faiss;
  std::vector<float> dense_rows;

  std::vector<float> sparse_f32;        // slots * sparse_dim, when stored as float32
  std::vector<Eigen::half> sparse_f16;  // slots * sparse_dim, when stored as float16
  std::vector<Matrix> tokens;           // by slot, when token embeddings are stored
  std::vector<std::string> ids;         // by slot; emptied when removed
  std::vector<std::string> texts;       // by slot; emptied when removed
  std::vector<std::uint8_t> live_bits;  // bit s % 8 of byte s / 8 (faiss::IDSelectorBitmap layout)
  std::size_t slots = 0;
  std::size_t live = 0;
  std::unordered_map<std::string, Slot> slot_by_id;  // live documents only
  std::optional<Bm25Index> bm25;
  std::uint64_t generation = next_generation();

  bool is_live(Slot s) const {
    return s >= 0 && std::size_t(s) < slots && (live_bits[std::size_t(s) / 8] >> (s % 8) & 1);
  }
  void set_live(std::size_t s, bool value) {
    if (live_bits.size() * 8 < s + 1) live_bits.resize(s / 8 + 1, 0);
    if (value) {
      live_bits[s / 8] |= std::uint8_t(1u << (s % 8));
    } else {
      live_bits[s / 8] &= std::uint8_t(~(1u << (s % 8)));
    }
  }
  bool is_ivf() const { return kind == IndexKind::kIvf || kind == IndexKind::kIvfPq; }
  const float* dense_base() const;
  // Creates the empty FAISS index of a flat/HNSW kind (IVF kinds: see train_ivf).
  void create_faiss();
  // Builds and trains the IVF index on `sample` (already normalised), then adds every slot.
  void train_ivf(const float* sample, std::size_t n);
  std::size_t required_training_rows() const;
  std::size_t min_training_rows() const;
};

}  // namespace counterpoint::index
