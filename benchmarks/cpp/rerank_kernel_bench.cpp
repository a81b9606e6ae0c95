// Stage-2 rerank kernels: one query against K = 1000 candidates of width 512, as after a
// FAISS top-1000. The plain sum reads the same bytes and is the memory-bound reference the
// kernels are compared with (bytes_per_second in each row). Each kernel runs twice, on the
// portable and on the AVX2 code (`/portable`, `/avx2`), the second where the CPU has it.
// benchmarks/speed/rerank_numpy.py times the same formula in NumPy.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "bench_support.h"
#include "counterpoint/core/matrix.h"
#include "counterpoint/scoring/pooled.h"

namespace {

using counterpoint::Matrix;
namespace scoring = counterpoint::scoring;
using scoring::KernelIsa;

constexpr std::size_t kCandidates = 1000;
constexpr std::size_t kWidth = 512;

Matrix unit_rows(std::size_t rows, unsigned seed) { return counterpoint::bench_support::random_rows(rows, kWidth, seed); }

struct Inputs {
  Matrix query_dense = unit_rows(1, 1);
  Matrix query_sparse = unit_rows(1, 2);
  Matrix candidates_dense = unit_rows(kCandidates, 3);
  Matrix candidates_sparse = unit_rows(kCandidates, 4);
  std::vector<std::uint16_t> candidates_sparse_f16 = scoring::to_half(candidates_sparse);
};

const Inputs& inputs() {
  static const Inputs instance;
  return instance;
}

constexpr std::int64_t kMatrixBytes = kCandidates * kWidth * sizeof(float);

// Selects `isa` for the run, or marks the row skipped where the CPU lacks it.
bool use_isa(benchmark::State& state, KernelIsa isa) {
  if (!scoring::kernel_isa_available(isa)) {
    state.SkipWithError(("this CPU cannot run the " + scoring::to_string(isa) + " kernels").c_str());
    return false;
  }
  scoring::set_kernel_isa(isa);
  return true;
}

#define COUNTERPOINT_KERNEL_BENCHMARK(function)                                                  \
  BENCHMARK_CAPTURE(function, portable, KernelIsa::kPortable)->Unit(benchmark::kMicrosecond); \
  BENCHMARK_CAPTURE(function, avx2, KernelIsa::kAvx2)->Unit(benchmark::kMicrosecond)

void BM_CombinedCosineHoyer(benchmark::State& state, KernelIsa isa) {
  if (!use_isa(state, isa)) return;
  const Inputs& in = inputs();
  for (auto _ : state) {
    auto scores = scoring::combined_scores(in.query_dense, in.candidates_dense, in.query_sparse,
                                           in.candidates_sparse, 1.0f, scoring::SparsityOptions{});
    benchmark::DoNotOptimize(scores.final.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * kMatrixBytes);
}
COUNTERPOINT_KERNEL_BENCHMARK(BM_CombinedCosineHoyer);

void BM_Cosine(benchmark::State& state, KernelIsa isa) {
  if (!use_isa(state, isa)) return;
  const Inputs& in = inputs();
  std::vector<float> out(kCandidates);
  for (auto _ : state) {
    scoring::cosine_scores(in.query_dense, in.candidates_dense, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kMatrixBytes);
}
COUNTERPOINT_KERNEL_BENCHMARK(BM_Cosine);

void BM_Hoyer(benchmark::State& state, KernelIsa isa) {
  if (!use_isa(state, isa)) return;
  const Inputs& in = inputs();
  std::vector<float> out(kCandidates);
  for (auto _ : state) {
    scoring::sparsity_scores(in.query_sparse, in.candidates_sparse, {}, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kMatrixBytes);
}
COUNTERPOINT_KERNEL_BENCHMARK(BM_Hoyer);

// Reads half as many bytes as BM_Hoyer.
void BM_HoyerF16(benchmark::State& state, KernelIsa isa) {
  if (!use_isa(state, isa)) return;
  const Inputs& in = inputs();
  std::vector<float> out(kCandidates);
  for (auto _ : state) {
    scoring::sparsity_scores_f16(in.query_sparse, in.candidates_sparse_f16.data(), kCandidates,
                                 kWidth, {}, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kMatrixBytes / 2);
}
COUNTERPOINT_KERNEL_BENCHMARK(BM_HoyerF16);

// What the rerank needs with the sparse rows stored as half: cosine on float E, Hoyer on
// half Es and the final sum (combined_scores has no half variant; the retriever composes it).
void BM_CombinedCosineHoyerF16(benchmark::State& state, KernelIsa isa) {
  if (!use_isa(state, isa)) return;
  const Inputs& in = inputs();
  std::vector<float> cosine(kCandidates), sparsity(kCandidates), final_scores(kCandidates);
  for (auto _ : state) {
    scoring::cosine_scores(in.query_dense, in.candidates_dense, cosine.data());
    scoring::sparsity_scores_f16(in.query_sparse, in.candidates_sparse_f16.data(), kCandidates,
                                 kWidth, {}, sparsity.data());
    for (std::size_t i = 0; i < kCandidates; ++i) final_scores[i] = cosine[i] + sparsity[i];
    benchmark::DoNotOptimize(final_scores.data());
  }
  state.SetBytesProcessed(state.iterations() * (kMatrixBytes + kMatrixBytes / 2));
}
COUNTERPOINT_KERNEL_BENCHMARK(BM_CombinedCosineHoyerF16);

// The memory-bound reference: one add per float over both candidate matrices. 32 independent
// sums, so the adds never wait on each other (8 sums would be held to one vector add per
// add latency, below the rate the caches deliver) and only the loads limit the rate.
void BM_PlainSumSameBytes(benchmark::State& state) {
  const Inputs& in = inputs();
  constexpr std::size_t kSums = 32;
  for (auto _ : state) {
    float sums[kSums] = {};
    for (const Matrix* m : {&in.candidates_dense, &in.candidates_sparse}) {
      const float* p = m->data();
      const std::size_t n = m->rows() * m->cols();
      for (std::size_t i = 0; i + kSums <= n; i += kSums) {
        for (std::size_t k = 0; k < kSums; ++k) sums[k] += p[i + k];
      }
    }
    benchmark::DoNotOptimize(sums);
  }
  state.SetBytesProcessed(state.iterations() * 2 * kMatrixBytes);
}
BENCHMARK(BM_PlainSumSameBytes)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
