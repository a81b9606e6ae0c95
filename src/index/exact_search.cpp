#include "exact_search.h"

#include <faiss/IndexFlat.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/impl/ResultHandler.h>
#include <faiss/utils/Heap.h>
#include <faiss/utils/distances.h>
#include <omp.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/scoring/cosine.h"

// The reference BLAS interface (LP64), as FAISS declares it; Debian's libblas.so.3 is OpenBLAS,
// whose sgemm picks its AVX2 / AVX-512 code at run time (DYNAMIC_ARCH).
extern "C" int sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                      const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                      const float* beta, float* c, const int* ldc);

namespace counterpoint::index::detail {
namespace {

// FAISS keeps a query's k best inner products in a min-heap ordered by (score, label) that only a
// strictly larger score enters, or, in a flat search from k = distance_compute_min_k_reservoir (100)
// on and without a selector, in a reservoir of about 2k that it partitions when full (IVF search
// always uses the heap). Using its own heap and
// reservoir, fed the rows in the same order, keeps the results identical to IndexFlatIP's and
// IndexIVFFlat's, the order among equal scores included.
using Heap = faiss::CMin<float, Label>;

class TopK {
 public:
  TopK(std::size_t k, bool heap_only, float* scores, Label* labels)
      : k_(k), scores_(scores), labels_(labels),
        reservoir_(!heap_only && k >= std::size_t(faiss::distance_compute_min_k_reservoir)) {
    if (reservoir_) {
      const std::size_t capacity = (2 * k + 15) & ~std::size_t(15);  // FAISS's ReservoirResultHandler
      values_.resize(capacity);
      ids_.resize(capacity);
      top_ = faiss::ReservoirTopN<Heap>(k, capacity, values_.data(), ids_.data());
    } else {
      faiss::heap_heapify<Heap>(k, scores, labels);
    }
  }
  float threshold() const { return reservoir_ ? top_.threshold : scores_[0]; }
  void add(float score, Label label) {
    if (reservoir_) {
      top_.add(score, label);
    } else {
      faiss::heap_replace_top<Heap>(k_, scores_, labels_, score, label);
    }
  }
  // Writes the k best, best first (missing: label -1, the lowest float).
  void finish() {
    if (reservoir_) {
      top_.to_result(scores_, labels_);
    } else {
      faiss::heap_reorder<Heap>(k_, scores_, labels_);
    }
  }

 private:
  std::size_t k_;
  float* scores_;
  Label* labels_;
  bool reservoir_;
  std::vector<float> values_;
  std::vector<Label> ids_;
  faiss::ReservoirTopN<Heap> top_;
};

// The largest piece of rows one thread scores per kernel call when a query is split over threads.
constexpr std::size_t kBlockRows = 4096;
// sgemm blocks: queries x rows scored per call (FAISS uses 4096 x 1024); 1024 rows of width 384
// are 1.5 MB, so a block of rows stays in L2/L3 while every query of the block reads it.
constexpr std::size_t kBlasQueries = 4096;
constexpr std::size_t kBlasRows = 1024;
// Scores of one sgemm block from which the queries' heaps take them on all threads.
constexpr std::size_t kParallelOfferScores = std::size_t(1) << 18;

// Offers n scores of rows [0, n) of `run` starting at row `start` to one query's heap.
void offer(const float* scores, std::size_t n, const RowRun& run, std::size_t start, LiveRows live, TopK& top) {
  float threshold = top.threshold();
  for (std::size_t j = 0; j < n; ++j) {
    if (!(scores[j] > threshold)) continue;
    const Label label = run.ids ? run.ids[start + j] : run.first + Label(start + j);
    if (!live.keeps(label)) continue;
    top.add(scores[j], label);
    threshold = top.threshold();
  }
}

// Fewer queries than threads (one query, typically): the rows are scored by all threads into one
// buffer, then each query's heap takes them in order on one thread, so the result does not depend
// on how the rows were split. Below kSplitFloats multiply-adds (tens of microseconds on one core)
// waking the other threads costs about what it saves.
constexpr std::size_t kSplitFloats = std::size_t(1) << 19;

void scan_split(const float* queries, std::size_t nq, const std::vector<std::vector<RowRun>>& runs, std::size_t d,
                std::size_t k, LiveRows live, bool heap_only, float* distances, Label* labels) {
  const std::size_t threads = std::size_t(omp_get_max_threads());
  for (std::size_t qi = 0; qi < nq; ++qi) {
    const float* q = queries + qi * d;
    const std::vector<RowRun>& mine = runs.size() == 1 ? runs[0] : runs[qi];
    std::size_t total = 0;
    for (const RowRun& run : mine) total += run.count;
    // Pieces of each run, in order, four per thread or more so that the threads finish together;
    // piece p's scores go to scores[offset].
    const std::size_t piece_rows = std::clamp<std::size_t>((total + 4 * threads - 1) / (4 * threads), 64, kBlockRows);
    struct Piece {
      std::size_t run, start, count, offset;
    };
    std::vector<Piece> pieces;
    std::size_t offset = 0;
    for (std::size_t r = 0; r < mine.size(); ++r) {
      for (std::size_t start = 0; start < mine[r].count; start += piece_rows) {
        const std::size_t n = std::min(piece_rows, mine[r].count - start);
        pieces.push_back({r, start, n, offset});
        offset += n;
      }
    }
    std::vector<float> scores(total);
    const auto pieces_count = std::int64_t(pieces.size());
#pragma omp parallel for schedule(dynamic) if (pieces_count > 1 && total * d >= kSplitFloats)
    for (std::int64_t p = 0; p < pieces_count; ++p) {
      const Piece& piece = pieces[std::size_t(p)];
      scoring::inner_products(q, mine[piece.run].rows + piece.start * d, piece.count, d, scores.data() + piece.offset);
    }
    TopK top(k, heap_only, distances + qi * k, labels + qi * k);
    for (const Piece& piece : pieces) {
      offer(scores.data() + piece.offset, piece.count, mine[piece.run], piece.start, live, top);
    }
    top.finish();
  }
}

// A batch of queries (at least one per thread) over their runs, run-major: each run of rows is
// read once for every query of the batch that scans it, a tile of rows at a time while the tile
// sits in L2, instead of once per query. An IVF batch probes each list for many queries (100
// queries, nprobe 125 of 1,000 lists: about 12 each), and reading the probed lists from memory is
// what bounds a query-by-query scan. Each query's scores land in its own buffer in its own run
// order, and its heap then takes them in that order, so the results are those of scanning query by query.
// Queries are taken in blocks whose buffers hold at most `batch_scores` scores (or one query).
constexpr std::size_t kTileRows = 128;  // 128 rows of width 384: 192 KB

void scan_batch(const float* queries, std::size_t nq, const std::vector<std::vector<RowRun>>& runs, std::size_t d,
                std::size_t k, LiveRows live, bool heap_only, float* distances, Label* labels,
                std::size_t batch_scores) {
  const auto runs_of = [&](std::size_t qi) -> const std::vector<RowRun>& { return runs.size() == 1 ? runs[0] : runs[qi]; };
  // One query's scan of one run, and where its scores go in the block's buffer; sorted by run,
  // a tile covers every scan of the same rows.
  struct Scan {
    const float* rows;
    std::size_t count, query, offset;
  };
  struct Tile {
    std::size_t first_scan, scans, start, count;
  };
  std::vector<float> buffer;
  std::vector<std::size_t> first_offset;
  std::vector<Scan> scans;
  std::vector<Tile> tiles;
  for (std::size_t q0 = 0; q0 < nq;) {
    std::size_t q1 = q0, total = 0;
    first_offset.clear();
    scans.clear();
    while (q1 < nq) {
      std::size_t mine = 0;
      for (const RowRun& run : runs_of(q1)) mine += run.count;
      if (q1 > q0 && total + mine > batch_scores) break;
      first_offset.push_back(total);
      for (const RowRun& run : runs_of(q1)) {
        scans.push_back({run.rows, run.count, q1, total});
        total += run.count;
      }
      ++q1;
    }
    // Scans of the same rows side by side (stable: a run's queries stay in query order).
    std::stable_sort(scans.begin(), scans.end(), [](const Scan& a, const Scan& b) {
      return a.rows != b.rows ? std::less<const float*>()(a.rows, b.rows) : a.count < b.count;
    });
    tiles.clear();
    for (std::size_t s = 0; s < scans.size();) {
      std::size_t e = s + 1;
      while (e < scans.size() && scans[e].rows == scans[s].rows && scans[e].count == scans[s].count) ++e;
      for (std::size_t start = 0; start < scans[s].count; start += kTileRows) {
        tiles.push_back({s, e - s, start, std::min(kTileRows, scans[s].count - start)});
      }
      s = e;
    }
    buffer.resize(total);
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t t = 0; t < std::int64_t(tiles.size()); ++t) {
      const Tile& tile = tiles[std::size_t(t)];
      for (std::size_t s = tile.first_scan; s < tile.first_scan + tile.scans; ++s) {
        const Scan& scan = scans[s];
        scoring::inner_products(queries + scan.query * d, scan.rows + tile.start * d, tile.count, d,
                                buffer.data() + scan.offset + tile.start);
      }
    }
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t qi = std::int64_t(q0); qi < std::int64_t(q1); ++qi) {
      const auto i = std::size_t(qi);
      TopK top(k, heap_only, distances + i * k, labels + i * k);
      const float* scores = buffer.data() + first_offset[i - q0];
      for (const RowRun& run : runs_of(i)) {
        offer(scores, run.count, run, 0, live, top);
        scores += run.count;
      }
      top.finish();
    }
    q0 = q1;
  }
}

void scan_queries(const float* queries, std::size_t nq, const std::vector<std::vector<RowRun>>& runs, std::size_t d,
                  std::size_t k, LiveRows live, bool heap_only, float* distances, Label* labels,
                  std::size_t batch_scores = kBatchScores) {
  if (nq < std::size_t(omp_get_max_threads())) {
    scan_split(queries, nq, runs, d, k, live, heap_only, distances, labels);
    return;
  }
  scan_batch(queries, nq, runs, d, k, live, heap_only, distances, labels, batch_scores);
}

// A batch: sgemm scores a block of queries against a block of rows, then each query's heap takes
// the block's rows in order (the rows' blocks in order too), queries in parallel.
void blas_search(const float* queries, std::size_t nq, const float* rows, std::size_t count, std::size_t d,
                 std::size_t k, LiveRows live, float* distances, Label* labels) {
  const std::size_t query_block = std::min(nq, kBlasQueries);
  std::unique_ptr<float[]> block(new float[query_block * kBlasRows]);
  const RowRun all{rows, count, nullptr, 0};
  const int di = int(d);
  const float one = 1.0f, zero = 0.0f;
  for (std::size_t q0 = 0; q0 < nq; q0 += kBlasQueries) {
    const std::size_t q1 = std::min(nq, q0 + kBlasQueries);
    std::vector<TopK> tops;
    tops.reserve(q1 - q0);
    for (std::size_t qi = q0; qi < q1; ++qi) tops.emplace_back(k, live.live != nullptr, distances + qi * k, labels + qi * k);
    for (std::size_t r0 = 0; r0 < count; r0 += kBlasRows) {
      const std::size_t r1 = std::min(count, r0 + kBlasRows);
      const int nr = int(r1 - r0), nqi = int(q1 - q0);
      // block (row-major nqi x nr) = queries[q0:q1] * rows[r0:r1]^T, in column-major terms.
      sgemm_("T", "N", &nr, &nqi, &di, &one, rows + r0 * d, &di, queries + q0 * d, &di, &zero, block.get(), &nr);
      // OpenBLAS's threads keep spinning after each sgemm, and an OpenMP team woken between two of
      // them fights those for the cores: worth it only for a block with enough scores to offer
      // (1M x 384 rows, 50 queries, 1,024-row blocks: 27 q/s with a team per block, 104 without;
      // 8,565 rows, 500 queries: 3,514 with, 2,769 without).
#pragma omp parallel for schedule(static) if (std::size_t(nqi) * std::size_t(nr) >= kParallelOfferScores)
      for (std::int64_t qi = std::int64_t(q0); qi < std::int64_t(q1); ++qi) {
        offer(block.get() + (std::size_t(qi) - q0) * std::size_t(nr), std::size_t(nr), all, r0, live,
              tops[std::size_t(qi) - q0]);
      }
    }
    for (TopK& top : tops) top.finish();
  }
}

}  // namespace

void exact_search(const float* queries, std::size_t nq, const float* rows, std::size_t count, std::size_t d,
                  std::size_t k, LiveRows live, float* distances, Label* labels, std::size_t blas_min_queries) {
  if (nq == 0) return;
  if (nq >= blas_min_queries && count > 0) {
    blas_search(queries, nq, rows, count, d, k, live, distances, labels);
    return;
  }
  scan_queries(queries, nq, {{RowRun{rows, count, nullptr, 0}}}, d, k, live, live.live != nullptr, distances, labels);
}

void exact_search_runs(const float* queries, std::size_t nq, const std::vector<std::vector<RowRun>>& runs,
                       std::size_t d, std::size_t k, LiveRows live, float* distances, Label* labels,
                       std::size_t batch_scores) {
  if (runs.size() != nq) {
    throw InvalidArgument("exact_search_runs: " + std::to_string(runs.size()) + " lists of runs for " +
                          std::to_string(nq) + " queries");
  }
  if (nq == 0) return;
  scan_queries(queries, nq, runs, d, k, live, true, distances, labels, batch_scores);
}

bool built_with_openmp() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

bool ivf_flat_search(const faiss::IndexIVFFlat& ivf, const float* queries, std::size_t nq, std::size_t nprobe,
                     std::size_t k, LiveRows live, float* distances, Label* labels) {
  const auto* quantizer = dynamic_cast<const faiss::IndexFlat*>(ivf.quantizer);
  const auto* lists = dynamic_cast<const faiss::ArrayInvertedLists*>(ivf.invlists);
  if (quantizer == nullptr || lists == nullptr || quantizer->metric_type != faiss::METRIC_INNER_PRODUCT ||
      ivf.metric_type != faiss::METRIC_INNER_PRODUCT || lists->code_size != ivf.d * sizeof(float)) {
    return false;
  }
  const std::size_t d = std::size_t(ivf.d);
  nprobe = std::max<std::size_t>(1, std::min(nprobe, ivf.nlist));
  std::vector<float> coarse_scores(nq * nprobe);
  std::vector<Label> coarse_lists(nq * nprobe);
  // The nearest lists on the kernels, never sgemm: nlist rows are few, and OpenBLAS's threads keep
  // spinning after a call, taking the cores from the list scan that follows (IVF batches ran 2x
  // slower with a coarse sgemm).
  exact_search(queries, nq, quantizer->get_xb(), std::size_t(quantizer->ntotal), d, nprobe, LiveRows{},
               coarse_scores.data(), coarse_lists.data(), std::numeric_limits<std::size_t>::max());
  std::vector<std::vector<RowRun>> runs(nq);
  for (std::size_t qi = 0; qi < nq; ++qi) {
    for (std::size_t p = 0; p < nprobe; ++p) {
      const Label list = coarse_lists[qi * nprobe + p];
      if (list < 0) continue;
      const auto l = std::size_t(list);
      const std::size_t count = lists->list_size(l);
      if (count == 0) continue;
      // ArrayInvertedLists hands out pointers into its own vectors: nothing to release.
      runs[qi].push_back({reinterpret_cast<const float*>(lists->get_codes(l)), count, lists->get_ids(l), 0});
    }
  }
  exact_search_runs(queries, nq, runs, d, k, live, distances, labels);
  return true;
}

}  // namespace counterpoint::index::detail
