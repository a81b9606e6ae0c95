// src/index: exact inner-product search over stored rows, the flat index's stage 1 and the list
// scan of IVF-Flat, on the scoring layer's run-time-dispatched kernels (single queries) and BLAS
// sgemm (batches). Debian's FAISS is a baseline x86-64 build whose inner products are scalar; these
// paths give the same results as its IndexFlatIP / IndexIVFFlat search (same heap, same order of
// visiting rows, so the same ids and the same order among equal scores), with scores that differ
// from FAISS's only by float rounding (another summation order).
#pragma once

#include <faiss/Index.h>
#include <faiss/IndexIVFFlat.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace counterpoint::index::detail {

using Label = faiss::Index::idx_t;

// A run of rows of width d scanned in order: row j has label ids[j], or first + j without ids.
struct RowRun {
  const float* rows = nullptr;
  std::size_t count = 0;
  const Label* ids = nullptr;
  Label first = 0;
};

// Rows whose label's bit is clear in `live` (faiss::IDSelectorBitmap's layout, `live_bytes` long)
// are skipped; live == nullptr keeps every row.
struct LiveRows {
  const std::uint8_t* live = nullptr;
  std::size_t live_bytes = 0;
  bool keeps(Label label) const {
    if (live == nullptr) return true;
    const auto byte = std::size_t(label) >> 3;
    return label >= 0 && byte < live_bytes && (live[byte] >> (label & 7) & 1);
  }
};

// Top-k by inner product of each of nq queries (row-major, width d) over `count` rows (label =
// row number), FAISS's result layout: distances / labels are nq x k, best first, missing entries
// label -1 and the lowest float. Batches of at least `blas_min_queries` go through sgemm, smaller
// ones on the kernels: fewer queries than threads with each query's rows split over the threads,
// more as exact_search_runs below scans a batch (the rows read once per block of queries).
constexpr std::size_t kBlasMinQueries = 20;
void exact_search(const float* queries, std::size_t nq, const float* rows, std::size_t count, std::size_t d,
                  std::size_t k, LiveRows live, float* distances, Label* labels,
                  std::size_t blas_min_queries = kBlasMinQueries);

// The same over a list of row runs per query (IVF-Flat: the probed lists, nearest first). A batch
// of at least one query per thread reads each run once for all its queries that scan it, in
// blocks of queries whose scores fit `batch_scores` floats (64 MB); the results are those of
// scanning query by query.
constexpr std::size_t kBatchScores = std::size_t(1) << 24;
void exact_search_runs(const float* queries, std::size_t nq, const std::vector<std::vector<RowRun>>& runs,
                       std::size_t d, std::size_t k, LiveRows live, float* distances, Label* labels,
                       std::size_t batch_scores = kBatchScores);

// IndexIVFFlat's search on these paths: the `nprobe` lists nearest the query (an exact search of
// its flat quantizer), then their rows in that order. False, and nothing written, when `ivf` does
// not keep its lists as addressable float rows behind a flat quantizer (then FAISS must search).
bool ivf_flat_search(const faiss::IndexIVFFlat& ivf, const float* queries, std::size_t nq, std::size_t nprobe,
                     std::size_t k, LiveRows live, float* distances, Label* labels);

// True when these paths were compiled with OpenMP. Without it their pragmas are ignored without a
// word and every search, split query and batch alike, runs on one thread.
bool built_with_openmp();

}  // namespace counterpoint::index::detail
