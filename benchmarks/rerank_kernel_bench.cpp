// Stage-2 rerank kernels: one query against K = 1000 candidates of width 512, as after a
// FAISS top-1000. The plain sum reads the same bytes and is the memory-bound reference the
// kernels are compared with (bytes_per_second in each row).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "counterpoint/core/matrix.h"
#include "counterpoint/scoring/pooled.h"

namespace {

using counterpoint::Matrix;
namespace scoring = counterpoint::scoring;

constexpr std::size_t kCandidates = 1000;
constexpr std::size_t kWidth = 512;

Matrix unit_rows(std::size_t rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix m(rows, kWidth);
  for (float& v : m.values()) v = normal(rng);
  counterpoint::normalize_rows(m);
  return m;
}

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

void BM_CombinedCosineHoyer(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) {
    auto scores = scoring::combined_scores(in.query_dense, in.candidates_dense, in.query_sparse,
                                           in.candidates_sparse, 1.0f, scoring::SparsityOptions{});
    benchmark::DoNotOptimize(scores.final.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * kMatrixBytes);
}
BENCHMARK(BM_CombinedCosineHoyer)->Unit(benchmark::kMicrosecond);

void BM_Cosine(benchmark::State& state) {
  const Inputs& in = inputs();
  std::vector<float> out(kCandidates);
  for (auto _ : state) {
    scoring::cosine_scores(in.query_dense, in.candidates_dense, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kMatrixBytes);
}
BENCHMARK(BM_Cosine)->Unit(benchmark::kMicrosecond);

void BM_Hoyer(benchmark::State& state) {
  const Inputs& in = inputs();
  std::vector<float> out(kCandidates);
  for (auto _ : state) {
    scoring::sparsity_scores(in.query_sparse, in.candidates_sparse, {}, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kMatrixBytes);
}
BENCHMARK(BM_Hoyer)->Unit(benchmark::kMicrosecond);

// Reads half as many bytes as BM_Hoyer.
void BM_HoyerF16(benchmark::State& state) {
  const Inputs& in = inputs();
  std::vector<float> out(kCandidates);
  for (auto _ : state) {
    scoring::sparsity_scores_f16(in.query_sparse, in.candidates_sparse_f16.data(), kCandidates,
                                 kWidth, {}, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kMatrixBytes / 2);
}
BENCHMARK(BM_HoyerF16)->Unit(benchmark::kMicrosecond);

// The memory-bound reference: one add per float over both candidate matrices.
void BM_PlainSumSameBytes(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) {
    float lanes[8] = {};
    for (const Matrix* m : {&in.candidates_dense, &in.candidates_sparse}) {
      const float* p = m->data();
      const std::size_t n = m->rows() * m->cols();
      for (std::size_t i = 0; i + 8 <= n; i += 8) {
        for (std::size_t k = 0; k < 8; ++k) lanes[k] += p[i + k];
      }
    }
    benchmark::DoNotOptimize(lanes);
  }
  state.SetBytesProcessed(state.iterations() * 2 * kMatrixBytes);
}
BENCHMARK(BM_PlainSumSameBytes)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
