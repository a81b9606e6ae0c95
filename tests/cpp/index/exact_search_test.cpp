// Stage 1 on the library's kernels and BLAS (exact_search.h) against FAISS itself: the same ids as
// faiss::IndexFlatIP / IndexIVFFlat for distinct scores, the same ids in the same order among
// equal scores, removed rows skipped as FAISS's IDSelectorBitmap skips them, under every kernel
// set and on both the per-query and the sgemm path.
#include "exact_search.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/IDSelector.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "counterpoint/scoring/kernel_isa.h"

namespace counterpoint::index::detail {
namespace {

using scoring::KernelIsa;

std::vector<float> gaussian(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// Small integers: every inner product is an exact integer in float whatever the summation order,
// so equal scores are equal on both sides and the order among them is the only difference left.
std::vector<float> small_integers(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-2, 2);
  std::vector<float> v(n);
  for (float& x : v) x = float(value(rng));
  return v;
}

struct Hits {
  std::vector<float> scores;
  std::vector<Label> labels;
};

Hits faiss_flat(const std::vector<float>& rows, const std::vector<float>& queries, std::size_t d, std::size_t k,
                const std::vector<std::uint8_t>* live) {
  faiss::IndexFlatIP flat{faiss::Index::idx_t(d)};
  flat.add(faiss::Index::idx_t(rows.size() / d), rows.data());
  const std::size_t nq = queries.size() / d;
  Hits h{std::vector<float>(nq * k), std::vector<Label>(nq * k)};
  std::optional<faiss::IDSelectorBitmap> selector;
  faiss::SearchParameters params;
  if (live) {
    selector.emplace(live->size(), live->data());
    params.sel = &*selector;
  }
  flat.search(faiss::Index::idx_t(nq), queries.data(), faiss::Index::idx_t(k), h.scores.data(), h.labels.data(),
              &params);
  return h;
}

Hits ours_flat(const std::vector<float>& rows, const std::vector<float>& queries, std::size_t d, std::size_t k,
               const std::vector<std::uint8_t>* live, std::size_t blas_min_queries) {
  const std::size_t nq = queries.size() / d;
  Hits h{std::vector<float>(nq * k), std::vector<Label>(nq * k)};
  const LiveRows live_rows{live ? live->data() : nullptr, live ? live->size() : 0};
  exact_search(queries.data(), nq, rows.data(), rows.size() / d, d, k, live_rows, h.scores.data(), h.labels.data(),
               blas_min_queries);
  return h;
}

// Scores agree to float rounding; a label may differ only where its score is within rounding of
// a neighbour's (two rows FAISS and the kernels sum in another order).
void expect_same_up_to_rounding(const Hits& ours, const Hits& theirs, std::size_t k, const char* what) {
  const float tolerance = 1e-4f;
  for (std::size_t i = 0; i < ours.labels.size(); ++i) {
    ASSERT_NEAR(ours.scores[i], theirs.scores[i], tolerance) << what << " entry " << i;
    const std::size_t rank = i % k;
    const bool near_previous = rank > 0 && std::fabs(theirs.scores[i] - theirs.scores[i - 1]) < tolerance;
    const bool near_next = rank + 1 < k && std::fabs(theirs.scores[i] - theirs.scores[i + 1]) < tolerance;
    if (!near_previous && !near_next) {
      EXPECT_EQ(ours.labels[i], theirs.labels[i]) << what << " entry " << i;
    }
  }
}

class ExactSearchTest : public ::testing::TestWithParam<KernelIsa> {
 protected:
  void SetUp() override {
    if (!scoring::kernel_isa_available(GetParam())) GTEST_SKIP() << "CPU lacks " << scoring::to_string(GetParam());
    scoring::set_kernel_isa(GetParam());
  }
  void TearDown() override { scoring::set_kernel_isa(default_isa_); }
  const KernelIsa default_isa_ = scoring::kernel_isa();
};

// Query counts 1 (rows split over threads), 3 (a query per thread) and 25 (sgemm); an odd width;
// k above the row count (missing entries -1).
TEST_P(ExactSearchTest, FlatMatchesFaissOnRandomRows) {
  const std::size_t d = 67, n = 5000;
  const std::vector<float> rows = gaussian(n * d, 1);
  for (std::size_t nq : {std::size_t(1), std::size_t(3), std::size_t(25)}) {
    const std::vector<float> queries = gaussian(nq * d, unsigned(100 + nq));
    for (std::size_t k : {std::size_t(1), std::size_t(100), std::size_t(n + 3)}) {
      const Hits theirs = faiss_flat(rows, queries, d, k, nullptr);
      expect_same_up_to_rounding(ours_flat(rows, queries, d, k, nullptr, kBlasMinQueries), theirs, k, "default");
      expect_same_up_to_rounding(ours_flat(rows, queries, d, k, nullptr, 1), theirs, k, "sgemm");
      expect_same_up_to_rounding(ours_flat(rows, queries, d, k, nullptr, nq + 1), theirs, k, "kernels");
    }
  }
}

TEST_P(ExactSearchTest, EqualScoresComeBackInFaissOrder) {
  // 40 distinct rows repeated 50 times: every score is shared by 50 rows, and k cuts through them.
  const std::size_t d = 24, distinct = 40;
  const std::vector<float> pattern = small_integers(distinct * d, 2);
  std::vector<float> rows;
  for (std::size_t copy = 0; copy < 50; ++copy) rows.insert(rows.end(), pattern.begin(), pattern.end());
  for (std::size_t nq : {std::size_t(1), std::size_t(2), std::size_t(30)}) {
    const std::vector<float> queries = small_integers(nq * d, unsigned(7 + nq));
    for (std::size_t k : {std::size_t(1), std::size_t(7), std::size_t(75), std::size_t(333)}) {
      const Hits theirs = faiss_flat(rows, queries, d, k, nullptr);
      for (std::size_t blas_from : {std::size_t(1), nq + 1}) {
        const Hits ours = ours_flat(rows, queries, d, k, nullptr, blas_from);
        EXPECT_EQ(ours.labels, theirs.labels) << "nq " << nq << " k " << k << " sgemm " << (blas_from == 1);
        EXPECT_EQ(ours.scores, theirs.scores) << "nq " << nq << " k " << k;
      }
    }
  }
}

TEST(ExactSearchThreads, TheSearchPathsAreBuiltWithOpenMp) {
  // A layer built without -fopenmp still links (FAISS brings libgomp) but runs single-threaded.
  EXPECT_TRUE(built_with_openmp());
}

// One query over enough rows to be split over the threads: FAISS's ids and order, with rows that
// tie inside the k best (duplicated rows) and rows that tie across the cut (every score shared by
// 600 rows).
TEST_P(ExactSearchTest, OneQuerySplitOverThreadsKeepsFaissIdsAndOrder) {
  {
    const std::size_t d = 64, n = 9000;
    std::vector<float> rows = gaussian(n * d, 21);
    std::copy(rows.begin(), rows.begin() + 300 * d, rows.begin() + 5000 * d);  // rows 5000.. repeat rows 0..
    ASSERT_GE(n * d, std::size_t(1) << 19) << "too few rows to be split";
    const std::vector<float> queries = gaussian(d, 22);
    for (std::size_t k : {std::size_t(100), std::size_t(1000), std::size_t(2000)}) {
      const Hits theirs = faiss_flat(rows, queries, d, k, nullptr);
      const Hits ours = ours_flat(rows, queries, d, k, nullptr, kBlasMinQueries);
      expect_same_up_to_rounding(ours, theirs, k, "split");
    }
  }
  {
    const std::size_t d = 24, distinct = 40;
    const std::vector<float> pattern = small_integers(distinct * d, 23);
    std::vector<float> rows;
    for (std::size_t copy = 0; copy < 600; ++copy) rows.insert(rows.end(), pattern.begin(), pattern.end());
    ASSERT_GE(rows.size(), std::size_t(1) << 19) << "too few rows to be split";
    const std::vector<float> queries = small_integers(d, 24);
    for (std::size_t k : {std::size_t(150), std::size_t(1000), std::size_t(4321)}) {
      const Hits theirs = faiss_flat(rows, queries, d, k, nullptr);
      const Hits ours = ours_flat(rows, queries, d, k, nullptr, kBlasMinQueries);
      EXPECT_EQ(ours.labels, theirs.labels) << "k " << k;
      EXPECT_EQ(ours.scores, theirs.scores) << "k " << k;
    }
  }
}

TEST_P(ExactSearchTest, RemovedRowsAreSkippedAsFaissSelectorSkipsThem) {
  const std::size_t d = 16, n = 3000;
  const std::vector<float> rows = small_integers(n * d, 3);
  std::vector<std::uint8_t> live((n + 7) / 8, 0xFF);
  std::mt19937 rng(4);
  for (std::size_t s = 0; s < n; ++s) {
    if (rng() % 3 == 0) live[s / 8] &= std::uint8_t(~(1u << (s % 8)));
  }
  for (std::size_t nq : {std::size_t(1), std::size_t(40)}) {
    const std::vector<float> queries = small_integers(nq * d, 5);
    for (std::size_t k : {std::size_t(10), std::size_t(2500)}) {  // 2500 > live rows: -1 entries
      const Hits theirs = faiss_flat(rows, queries, d, k, &live);
      const Hits ours = ours_flat(rows, queries, d, k, &live, kBlasMinQueries);
      EXPECT_EQ(ours.labels, theirs.labels) << "nq " << nq << " k " << k;
      EXPECT_EQ(ours.scores, theirs.scores) << "nq " << nq << " k " << k;
      for (Label label : ours.labels) {
        if (label >= 0) {
          EXPECT_TRUE(live[std::size_t(label) / 8] >> (label % 8) & 1) << label;
        }
      }
    }
  }
}

TEST_P(ExactSearchTest, IvfFlatMatchesFaissWithTheSameProbes) {
  const std::size_t d = 32, n = 4000, nlist = 20;
  const std::vector<float> rows = small_integers(n * d, 6);
  faiss::IndexFlatIP quantizer{faiss::Index::idx_t(d)};
  faiss::IndexIVFFlat ivf(&quantizer, d, nlist, faiss::METRIC_INNER_PRODUCT);
  ivf.train(faiss::Index::idx_t(n), rows.data());
  ivf.add(faiss::Index::idx_t(n), rows.data());
  std::vector<std::uint8_t> live((n + 7) / 8, 0xFF);
  for (std::size_t s = 0; s < n; s += 5) live[s / 8] &= std::uint8_t(~(1u << (s % 8)));
  for (std::size_t nq : {std::size_t(1), std::size_t(30)}) {
    const std::vector<float> queries = small_integers(nq * d, unsigned(8 + nq));
    for (std::size_t nprobe : {std::size_t(1), std::size_t(4), nlist}) {
      const std::vector<const std::vector<std::uint8_t>*> filters = {nullptr, &live};
      for (const std::vector<std::uint8_t>* filter : filters) {
        const std::size_t k = 50;
        Hits theirs{std::vector<float>(nq * k), std::vector<Label>(nq * k)};
        std::optional<faiss::IDSelectorBitmap> selector;
        faiss::SearchParametersIVF params;
        params.nprobe = nprobe;
        if (filter) {
          selector.emplace(filter->size(), filter->data());
          params.sel = &*selector;
        }
        ivf.search(faiss::Index::idx_t(nq), queries.data(), faiss::Index::idx_t(k), theirs.scores.data(),
                   theirs.labels.data(), &params);
        Hits ours{std::vector<float>(nq * k), std::vector<Label>(nq * k)};
        const LiveRows live_rows{filter ? filter->data() : nullptr, filter ? filter->size() : 0};
        ASSERT_TRUE(ivf_flat_search(ivf, queries.data(), nq, nprobe, k, live_rows, ours.scores.data(),
                                    ours.labels.data()));
        // Integer centroids are not guaranteed, so the probed lists can differ where two centroids
        // tie within rounding; on these rows they do not, and the results are FAISS's exactly.
        EXPECT_EQ(ours.labels, theirs.labels) << "nq " << nq << " nprobe " << nprobe << " filtered " << bool(filter);
        EXPECT_EQ(ours.scores, theirs.scores) << "nq " << nq << " nprobe " << nprobe;
      }
    }
  }
}

// A batch reads each shared run once for all its queries; each query must still get exactly what
// it gets alone: the same scores bit for bit (the same kernel per row) and the same ids in the same
// order, with queries that share some runs and not others, runs listed in different orders, a
// removed-rows filter, and blocks of queries cut small enough that a batch takes several.
TEST_P(ExactSearchTest, ABatchOverSharedRunsGivesEachQueryWhatItGetsAlone) {
  const std::size_t d = 24, lists = 6, per_list = 300, nq = 9, k = 40;
  const std::vector<float> rows = gaussian(lists * per_list * d, 11);
  std::vector<Label> ids(lists * per_list);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = Label(7 * i + 3);
  std::vector<std::uint8_t> live((7 * ids.size() + 10) / 8, 0xFF);
  for (std::size_t i = 0; i < ids.size(); i += 4) live[std::size_t(ids[i]) / 8] &= std::uint8_t(~(1u << (ids[i] % 8)));
  const auto run_of = [&](std::size_t list) {
    return RowRun{rows.data() + list * per_list * d, per_list, ids.data() + list * per_list, 0};
  };
  const std::vector<float> queries = gaussian(nq * d, 12);
  std::vector<std::vector<RowRun>> runs(nq);
  for (std::size_t qi = 0; qi < nq; ++qi) {
    for (std::size_t p = 0; p < 3; ++p) runs[qi].push_back(run_of((qi + 2 * p) % lists));  // shared, in varied orders
  }
  for (const bool filtered : {false, true}) {
    const LiveRows live_rows{filtered ? live.data() : nullptr, filtered ? live.size() : 0};
    Hits alone{std::vector<float>(nq * k), std::vector<Label>(nq * k)};
    for (std::size_t qi = 0; qi < nq; ++qi) {
      exact_search_runs(queries.data() + qi * d, 1, {runs[qi]}, d, k, live_rows, alone.scores.data() + qi * k,
                        alone.labels.data() + qi * k);
    }
    for (const std::size_t batch_scores : {std::size_t(1), 3 * per_list * 2, kBatchScores}) {
      Hits batch{std::vector<float>(nq * k), std::vector<Label>(nq * k)};
      exact_search_runs(queries.data(), nq, runs, d, k, live_rows, batch.scores.data(), batch.labels.data(),
                        batch_scores);
      EXPECT_EQ(batch.labels, alone.labels) << "filtered " << filtered << ", blocks of " << batch_scores << " scores";
      EXPECT_EQ(batch.scores, alone.scores) << "filtered " << filtered << ", blocks of " << batch_scores << " scores";
    }
  }
}

std::string isa_name(const ::testing::TestParamInfo<KernelIsa>& info) { return scoring::to_string(info.param); }
INSTANTIATE_TEST_SUITE_P(Isa, ExactSearchTest, ::testing::Values(KernelIsa::kPortable, KernelIsa::kAvx2), isa_name);

}  // namespace
}  // namespace counterpoint::index::detail
