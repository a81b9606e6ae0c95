// Two-stage search on hand-made embeddings: what each scorer ranks first and why.
#include "counterpoint/retrieval/retriever.h"

#include <gtest/gtest.h>

#include <limits>

#include <atomic>
#include <cmath>
#include <map>
#include <random>
#include <thread>

#include "counterpoint/core/errors.h"
#include "counterpoint/scoring/cosine.h"
#include "counterpoint/scoring/sparsity.h"
#include "message_of.h"

using namespace counterpoint;
using namespace counterpoint::retrieval;
using counterpoint::test_support::kNothingThrown;
using counterpoint::test_support::message_of;

namespace {

// Four documents in 4-d. The query is e0. "para" is closest in cosine; "contra" is a bit
// further but differs from the query in a single Es coordinate (a sparse difference), which
// is what the sparse-aware encoder is trained to produce for contradictions.
struct Fixture {
  std::shared_ptr<index::DocumentIndex> index;
  EncodedQueries queries;
};

Matrix rows(std::vector<std::vector<float>> values) {
  Matrix m;
  for (const auto& v : values) m.append_rows(MatrixView(v.data(), 1, v.size()));
  return m;
}

Fixture make_fixture() {
  index::IndexOptions options;
  options.dim = 4;
  options.sparse_dim = 4;
  auto idx = std::make_shared<index::DocumentIndex>(options);
  const Matrix dense = rows({{0.95f, 0.31f, 0, 0}, {0.90f, 0.43f, 0, 0}, {0, 1, 0, 0}, {0.2f, 0, 0.98f, 0}});
  const Matrix sparse = rows({{0.6f, 0.5f, 0.4f, 0.3f}, {1, 0, 0, 0.9f}, {0, 1, 0, 0}, {0, 0, 1, 0}});
  idx->add({"cats sleep a lot", "cats never sleep", "dogs bark", "the weather is fine"},
           {"para", "contra", "other", "far"}, dense, sparse);
  Fixture f;
  f.index = idx;
  f.queries.texts = {"do cats sleep"};
  f.queries.dense = rows({{1, 0, 0, 0}});
  f.queries.sparse = rows({{1, 0, 0, 0}});
  return f;
}

// Options of a cos +/- alpha * sparsity search with alpha 1.
SearchOptions sparsity_search(std::size_t k, Stance stance) {
  SearchOptions options;
  options.k = k;
  options.scorer = Scorer::kSparsity;
  options.alpha = 1.0f;
  options.stance = stance;
  return options;
}

// `hits` as another store would hand them to rerank: ids, cosines and Es rows (kept in `sparse`).
CandidateRows candidates_of(const Fixture& f, const std::vector<Hit>& hits, std::vector<float>& sparse) {
  CandidateRows rows;
  std::vector<index::Slot> slots;
  for (const auto& h : hits) {
    rows.ids.push_back(h.id);
    rows.stage1.push_back(h.cosine);
    slots.push_back(h.slot);
  }
  sparse.assign(slots.size() * 4, 0.0f);
  f.index->gather_sparse(slots.data(), slots.size(), sparse.data());
  rows.sparse = sparse.data();
  rows.sparse_dim = 4;
  return rows;
}

std::vector<std::string> ids(const std::vector<Hit>& hits) {
  std::vector<std::string> out;
  for (const auto& h : hits) out.push_back(h.id);
  return out;
}

}  // namespace

TEST(Retriever, CosineRanksTheParaphraseFirst) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 2;
  const auto hits = retriever.search_encoded(f.queries, options);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(ids(hits[0]), (std::vector<std::string>{"para", "contra"}));
  EXPECT_NEAR(hits[0][0].cosine, 0.95 / std::sqrt(0.95 * 0.95 + 0.31 * 0.31), 1e-5);
  EXPECT_FLOAT_EQ(hits[0][0].score, hits[0][0].cosine);
  EXPECT_EQ(hits[0][0].sparsity, 0.0f);
}

TEST(Retriever, HoyerTermLiftsTheSparseDifference) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 2;
  options.scorer = Scorer::kSparsity;
  options.alpha = 1.0f;
  const auto hits = retriever.search_encoded(f.queries, options);
  EXPECT_EQ(ids(hits[0]), (std::vector<std::string>{"contra", "para"}));
  for (const auto& h : hits[0]) EXPECT_NEAR(h.score, h.cosine + h.sparsity, 1e-6);
  EXPECT_GT(hits[0][0].sparsity, hits[0][1].sparsity);
}

TEST(Retriever, ExcludedIdsNeverAppearAndKBeyondCorpusReturnsWhatExists) {
  auto f = make_fixture();
  f.queries.exclude = {{"para"}};
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 10;
  options.candidates = 10;
  const auto hits = retriever.search_encoded(f.queries, options);
  EXPECT_EQ(hits[0].size(), 3u);
  for (const auto& h : hits[0]) EXPECT_NE(h.id, "para");
}

// K is capped at the index size: a billion candidates on four documents used to allocate 12 GB.
TEST(Retriever, CandidatesBeyondTheIndexSizeAreCappedNotAllocated) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 1000000000;
  options.candidates = 4000000000u;
  const auto hits = retriever.search_encoded(f.queries, options);
  EXPECT_EQ(hits[0].size(), 4u);
  options.stage1 = Stage1::kBm25;
  EXPECT_LE(retriever.search_encoded(f.queries, options)[0].size(), 4u);
}

TEST(Retriever, HybridFusionCountsDocumentsFoundByOneListOnly) {
  auto f = make_fixture();
  f.queries.texts = {"weather"};  // BM25 finds only "far", which is last by cosine
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 4;
  options.candidates = 4;
  options.stage1 = Stage1::kHybrid;
  options.fusion_lambda = 2.0f;
  const auto hits = retriever.search_encoded(f.queries, options);
  ASSERT_EQ(hits[0].size(), 4u);
  EXPECT_EQ(hits[0][0].id, "far");  // n(cos) = 0.2-ish, + 2 * n(bm25) = 2
  EXPECT_GT(hits[0][0].bm25, 0.0f);
  EXPECT_NEAR(hits[0][0].score, hits[0][0].stage1, 1e-6);
}

// BM25 ranks BM25's candidates by BM25, and each hit still reports its cosine when the query was
// encoded. A sparsity term on top of raw BM25 (unbounded, where alpha is tuned against a cosine)
// would barely move its order, so that search is refused rather than run in name only.
TEST(Retriever, Bm25HitsReportTheirCosineAndTakeNoSparsityTerm) {
  auto f = make_fixture();
  f.queries.texts = {"cats sleep"};
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = options.candidates = 4;
  std::map<std::string, float> cosine;
  const auto dense = retriever.search_encoded(f.queries, options);
  for (const Hit& h : dense[0]) cosine[h.id] = h.cosine;
  options.stage1 = Stage1::kBm25;
  const auto hits = retriever.search_encoded(f.queries, options)[0];
  ASSERT_EQ(hits.size(), 2u);  // the two passages with "cats" or "sleep"
  for (const Hit& h : hits) {
    EXPECT_FLOAT_EQ(h.score, h.bm25) << h.id;
    EXPECT_FLOAT_EQ(h.cosine, cosine.at(h.id)) << h.id;
    EXPECT_GT(h.cosine, 0.8f) << h.id;
  }
  options = sparsity_search(4, Stance::kAttack);
  options.stage1 = Stage1::kBm25;
  EXPECT_EQ(message_of([&] { retriever.search_encoded(f.queries, options); }),
            "the sparsity term is added to the stage-1 score, and stage1 'bm25' scores by raw BM25 (unbounded, where "
            "alpha is tuned against a cosine): choose stage1 dense, or hybrid for BM25 beside the dense score");
}

// Alpha tuning finds the candidates once and rescores them at every alpha: each rescoring is the
// search it stands for, hit for hit and score for score, on every stage-1 source a sparsity
// search takes.
TEST(Retriever, RescoringFoundCandidatesIsTheSearchAtEveryAlpha) {
  auto f = make_fixture();
  f.queries.texts = {"cats sleep"};
  Retriever retriever(f.index, nullptr);
  for (Stage1 source : {Stage1::kDense, Stage1::kHybrid}) {
    SearchOptions options = sparsity_search(4, Stance::kAttack);
    options.candidates = 4;
    options.stage1 = source;
    if (source == Stage1::kHybrid) options.fusion_lambda = 0.5f;
    const auto candidates = retriever.find_candidates(f.queries, options);
    EXPECT_EQ(candidates.queries(), 1u);
    for (float alpha : {0.0f, 0.3f, 1.0f, 5.0f}) {
      options.alpha = alpha;
      const auto searched = retriever.search_encoded(f.queries, options);
      const auto rescored = retriever.rescore(f.queries, candidates, options);
      ASSERT_EQ(rescored.size(), 1u);
      ASSERT_EQ(ids(rescored[0]), ids(searched[0])) << to_string(source) << " alpha " << alpha;
      for (std::size_t i = 0; i < searched[0].size(); ++i) {
        EXPECT_EQ(rescored[0][i].score, searched[0][i].score);
        EXPECT_EQ(rescored[0][i].stage1, searched[0][i].stage1);
      }
    }
  }
  // Stage 1 never read alpha: rescoring at alpha 0 and 5 ranks "para" then "contra" apart.
  SearchOptions cosine_first = sparsity_search(1, Stance::kAttack);
  const auto candidates = retriever.find_candidates(f.queries, cosine_first);
  cosine_first.alpha = 0.0f;
  EXPECT_EQ(retriever.rescore(f.queries, candidates, cosine_first)[0][0].id, "para");
  cosine_first.alpha = 5.0f;
  EXPECT_EQ(retriever.rescore(f.queries, candidates, cosine_first)[0][0].id, "contra");
}

// alpha, the magnitude gate and the stance shape the sparsity term only: given to a scorer without
// one they would change nothing, so a search that names them gets the sparsity scorer or an error.
TEST(Retriever, SettingsOfTheSparsityTermAreRefusedByScorersWithoutOne) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  const auto refusal = [&](const SearchOptions& options) {
    return message_of([&] { retriever.search_encoded(f.queries, options); });
  };
  SearchOptions cosine;
  cosine.k = 1;
  cosine.alpha = 2.0f;
  EXPECT_EQ(refusal(cosine),
            "alpha weighs the sparsity term and scorer 'cosine' has no sparsity term: choose hoyer, l2l1 or kappa4, "
            "or leave it out");
  cosine.alpha.reset();
  cosine.sparsity.scale = 0.3f;
  EXPECT_EQ(refusal(cosine),
            "sparsity scale gates the sparsity term and scorer 'cosine' has no sparsity term: choose hoyer, l2l1 or "
            "kappa4, or leave it out");
  cosine.sparsity.scale.reset();
  cosine.stance = Stance::kSupport;
  EXPECT_EQ(refusal(cosine),
            "stance 'support' signs the sparsity term and scorer 'cosine' has no sparsity term: choose hoyer, l2l1 "
            "or kappa4, or leave it out");
  cosine.stance = Stance::kFromQuery;
  cosine.sparsity.identical_guard = false;
  EXPECT_EQ(refusal(cosine),
            "turning the identical guard off changes the sparsity term only, and scorer 'cosine' has no sparsity "
            "term: choose hoyer, l2l1 or kappa4, or keep the guard");
  cosine.sparsity.identical_guard = true;
  EXPECT_EQ(refusal(cosine), kNothingThrown);
  // alpha 0 and scale 0 (no term, no gate) are what cosine does: a sweep may start there.
  cosine.alpha = 0.0f;
  cosine.sparsity.scale = 0.0f;
  EXPECT_EQ(refusal(cosine), kNothingThrown);
  // The sparsity scorer reads all three.
  SearchOptions sparsity = sparsity_search(1, Stance::kSupport);
  sparsity.alpha = 2.0f;
  sparsity.sparsity.scale = 0.3f;
  EXPECT_EQ(refusal(sparsity), kNothingThrown);
}

// Likewise the fusion settings, read by a hybrid stage 1 only, each under its own fusion.
TEST(Retriever, FusionSettingsAreRefusedWhereNoHybridStage1ReadsThem) {
  auto f = make_fixture();
  f.queries.texts = {"weather"};
  Retriever retriever(f.index, nullptr);
  const auto refusal = [&](const SearchOptions& options) {
    return message_of([&] { retriever.search_encoded(f.queries, options); });
  };
  SearchOptions dense;
  dense.k = 1;
  dense.fusion_lambda = 0.3f;
  EXPECT_EQ(refusal(dense), "fusion_lambda weighs BM25 in a hybrid stage 1 fused by rsf, and stage1 'dense' fuses "
                            "nothing: choose stage1 hybrid, or leave fusion_lambda out");
  dense.fusion_lambda = SearchOptions{}.fusion_lambda;
  dense.fusion = Fusion::kReciprocalRank;
  EXPECT_EQ(refusal(dense), "fusion 'rrf' fuses the hybrid stage 1, and stage1 'dense' fuses nothing: choose stage1 "
                            "hybrid, or leave fusion out");
  SearchOptions rrf = dense;
  rrf.stage1 = Stage1::kHybrid;
  rrf.fusion_lambda = 0.3f;
  EXPECT_EQ(refusal(rrf), "fusion_lambda weighs BM25 in a hybrid stage 1 fused by rsf, and this one is fused by rrf: "
                          "choose fusion rsf, or leave fusion_lambda out");
  rrf.fusion_lambda = SearchOptions{}.fusion_lambda;
  rrf.rrf_k = 10;
  EXPECT_EQ(refusal(rrf), kNothingThrown);
  SearchOptions rsf = rrf;
  rsf.fusion = Fusion::kRelativeScore;
  EXPECT_EQ(refusal(rsf), "rrf_k ranks a hybrid stage 1 fused by rrf, and this one is fused by rsf: choose fusion "
                          "rrf, or leave rrf_k out");
  rsf.rrf_k = SearchOptions{}.rrf_k;
  rsf.fusion_lambda = 0.3f;
  EXPECT_EQ(refusal(rsf), kNothingThrown);
}

TEST(Retriever, CandidatesAreRescoredOnlyWithTheStage1TheyCameFrom) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr), other(f.index, nullptr);
  SearchOptions options = sparsity_search(2, Stance::kAttack);
  options.candidates = 3;
  auto candidates = retriever.find_candidates(f.queries, options);
  const auto expect_refused = [&](const Retriever::CandidateSet& set, const EncodedQueries& queries,
                                  const SearchOptions& o, const Retriever& r, const std::string& says) {
    try {
      r.rescore(queries, set, o);
      ADD_FAILURE() << "rescored although " << says;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  SearchOptions deeper = options;
  deeper.candidates = 4;
  expect_refused(candidates, f.queries, deeper, retriever, "other stage-1 options");
  SearchOptions fused = options;
  fused.stage1 = Stage1::kHybrid;
  expect_refused(candidates, f.queries, fused, retriever, "other stage-1 options");
  expect_refused(candidates, f.queries, options, other, "another retriever");
  // A copy of the queries is the same queries; other exclusions or rows are not.
  EncodedQueries copy = f.queries;
  EXPECT_EQ(ids(retriever.rescore(copy, candidates, options)[0]), ids(retriever.search_encoded(f.queries, options)[0]));
  copy.exclude = {{"contra"}};
  expect_refused(candidates, copy, options, retriever, "other queries");
  copy = f.queries;
  copy.dense.row(0)[1] = 0.5f;
  expect_refused(candidates, copy, options, retriever, "other queries");
  // What stage 2 alone reads may change: k, the scorer, alpha.
  SearchOptions cosine = options;
  cosine.scorer = Scorer::kCosine;
  cosine.alpha.reset();
  cosine.stance = Stance::kFromQuery;
  cosine.k = 3;
  EXPECT_EQ(retriever.rescore(f.queries, candidates, cosine)[0].size(), 3u);
  // An empty set: default-constructed, or moved from.
  expect_refused(Retriever::CandidateSet{}, f.queries, options, retriever, "holds no candidates");
  const auto moved_to = std::move(candidates);
  expect_refused(candidates, f.queries, options, retriever, "holds no candidates");  // NOLINT(bugprone-use-after-move)
  // A document removed and another added since (the same count) make the candidates stale.
  f.index->remove({"far"});
  const Matrix dense = rows({{1, 0, 0, 0}}), sparse = rows({{0, 1, 0, 0}});
  f.index->add({"cats sleep all day"}, {"new"}, dense, sparse);
  ASSERT_EQ(f.index->size(), 4u);
  expect_refused(moved_to, f.queries, options, retriever, "the index changed");
}

TEST(Retriever, Bm25AloneNeedsOnlyTheQueryTexts) {
  auto f = make_fixture();
  EncodedQueries texts_only;
  texts_only.texts = {"weather"};
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 1;
  options.stage1 = Stage1::kBm25;
  const auto hits = retriever.search_encoded(texts_only, options);
  ASSERT_EQ(hits.size(), 1u);
  ASSERT_EQ(hits[0].size(), 1u);
  EXPECT_EQ(hits[0][0].id, "far");
  EXPECT_FLOAT_EQ(hits[0][0].score, hits[0][0].bm25);
}

TEST(Retriever, RejectsImpossibleRequestsWithClearErrors) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 0;
  EXPECT_THROW(retriever.search_encoded(f.queries, options), InvalidArgument);
  options.k = 5;
  options.candidates = 2;
  EXPECT_THROW(retriever.search_encoded(f.queries, options), InvalidArgument);
  options.candidates = 5;
  options.scorer = Scorer::kSparsity;
  f.queries.sparse = Matrix();
  EXPECT_THROW(retriever.search_encoded(f.queries, options), InvalidArgument);
  EXPECT_THROW(SearchOptions o; set_scorer(o, "bogus"), InvalidArgument);
  auto nan_queries = make_fixture().queries;
  nan_queries.dense(0, 1) = std::nanf("");
  EXPECT_THROW(retriever.search_encoded(nan_queries, SearchOptions{}), InvalidArgument);
}

// Issue 28: scorer, stage-1 and fusion names are read whatever their case; a typo gets the nearest.
TEST(Retriever, OptionNamesAreCaseInsensitiveAndATypoGetsTheNearest) {
  SearchOptions o;
  set_scorer(o, "HOYER");
  EXPECT_EQ(o.scorer, Scorer::kSparsity);
  EXPECT_EQ(o.sparsity.function, scoring::Sparsity::kHoyer);
  EXPECT_EQ(parse_stage1("Hybrid"), Stage1::kHybrid);
  EXPECT_EQ(parse_fusion("RRF"), Fusion::kReciprocalRank);
  try {
    set_scorer(o, "hoyr");
    ADD_FAILURE() << "scorer hoyr was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown scorer 'hoyr'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("; did you mean 'hoyer'?"), std::string::npos);
  }
}

TEST(Retriever, EmptyIndexGivesNoHits) {
  index::IndexOptions options;
  options.dim = 4;
  auto idx = std::make_shared<index::DocumentIndex>(options);
  Retriever retriever(idx, nullptr);
  auto f = make_fixture();
  const auto hits = retriever.search_encoded(f.queries, SearchOptions{});
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_TRUE(hits[0].empty());
}

TEST(Retriever, ConcurrentSearchesMatchSerialOnes) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 4;
  options.candidates = 4;
  options.scorer = Scorer::kSparsity;
  const auto expected = ids(retriever.search_encoded(f.queries, options)[0]);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        if (ids(retriever.search_encoded(f.queries, options)[0]) != expected) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Stage 2 scores the candidates' Es where the index keeps them: with float16 storage the hits'
// sparsity is the gather-and-score kernel's over the stored half rows, within the float16
// tolerance of float32 storage, and every final score is stage 1 + alpha * sparsity.
TEST(Retriever, Float16EsIsScoredInPlaceAndMatchesFloat32StorageWithinTolerance) {
  constexpr std::size_t kDocs = 200, kDim = 32;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix dense(kDocs, kDim), sparse(kDocs, kDim), query(1, kDim), sparse_query(1, kDim);
  for (auto* m : {&dense, &sparse, &query, &sparse_query})
    for (float& v : m->values()) v = normal(rng);
  std::vector<std::string> texts(kDocs), doc_ids(kDocs);
  for (std::size_t i = 0; i < kDocs; ++i) doc_ids[i] = "d" + std::to_string(i);
  std::vector<std::vector<Hit>> by_storage[2];
  for (int half = 0; half < 2; ++half) {
    index::IndexOptions options;
    options.dim = options.sparse_dim = kDim;
    options.build_bm25 = false;
    if (half) options.sparse_storage = index::IndexOptions::SparseStorage::kFloat16;
    auto idx = std::make_shared<index::DocumentIndex>(options);
    idx->add(texts, doc_ids, dense, sparse);
    EncodedQueries q;
    q.texts = {""};
    q.dense = query;
    q.sparse = sparse_query;
    SearchOptions search;
    search.k = 50;
    search.candidates = 100;
    search.scorer = Scorer::kSparsity;
    search.alpha = 1.5f;
    by_storage[half] = Retriever(idx, nullptr).search_encoded(q, search);
    const auto& hits = by_storage[half][0];
    ASSERT_EQ(hits.size(), 50u);
    std::vector<index::Slot> slots;
    for (const Hit& h : hits) slots.push_back(h.slot);
    std::vector<float> expected(hits.size());
    idx->with_sparse_table(slots.data(), slots.size(), [&](const index::DocumentIndex::SparseTable& table) {
      ASSERT_EQ(table.f16 != nullptr, bool(half));
      if (half) {
        scoring::sparsity_scores_gather_f16(sparse_query, table.f16, table.rows, slots.data(), slots.size(), {},
                                            expected.data());
      } else {
        scoring::sparsity_scores_gather(sparse_query, table.f32, table.rows, slots.data(), slots.size(), {},
                                        expected.data());
      }
    });
    for (std::size_t i = 0; i < hits.size(); ++i) {
      EXPECT_EQ(hits[i].sparsity, expected[i]) << i;
      EXPECT_EQ(hits[i].score, hits[i].stage1 + 1.5f * hits[i].sparsity) << i;
    }
  }
  std::map<std::string, float> float32_sparsity;
  for (const Hit& h : by_storage[0][0]) float32_sparsity[h.id] = h.sparsity;
  for (const Hit& h : by_storage[1][0]) {
    if (float32_sparsity.count(h.id)) {
      EXPECT_NEAR(h.sparsity, float32_sparsity[h.id], 1e-3) << h.id;
    }
  }
}

// A hit's cosine is the cosine of the query and the stored row whatever found it: an exact scan's
// inner products are reused as they are, an IVF-PQ's approximations or HNSW's are recomputed.
TEST(Retriever, HitCosinesAreTheStoredRowsCosinesOnEveryIndexKind) {
  constexpr std::size_t kDocs = 1200, kDim = 16;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix dense(kDocs, kDim), query(1, kDim);
  for (auto* m : {&dense, &query})
    for (float& v : m->values()) v = normal(rng);
  std::vector<std::string> texts(kDocs), doc_ids(kDocs);
  for (std::size_t i = 0; i < kDocs; ++i) doc_ids[i] = "d" + std::to_string(i);
  for (const char* kind : {"flat", "hnsw", "ivf", "ivfpq"}) {
    index::IndexOptions options;
    options.dim = kDim;
    options.kind = kind;
    options.build_bm25 = false;
    options.ivf_nlist = 8;
    options.pq_m = 4;
    options.pq_bits = 6;
    auto idx = std::make_shared<index::DocumentIndex>(options);
    idx->add(texts, doc_ids, dense);
    EncodedQueries q;
    q.texts = {""};
    q.dense = query;
    SearchOptions search;
    search.k = 20;
    search.candidates = 100;
    const auto hits = Retriever(idx, nullptr).search_encoded(q, search)[0];
    ASSERT_EQ(hits.size(), 20u) << kind;
    for (const Hit& h : hits) {
      float expected = 0.0f;
      scoring::cosine_scores(query, MatrixView(idx->dense_row(h.slot), 1, kDim), &expected);
      EXPECT_NEAR(h.cosine, expected, 1e-6) << kind << " " << h.id;
      EXPECT_EQ(h.score, h.cosine) << kind << " " << h.id;
    }
    for (std::size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].score, hits[i].score) << kind;
  }
}

// A document that is the query itself has cosine 1 however its unit row's products round.
TEST(Retriever, ACosineNeverPassesOne) {
  constexpr std::size_t kDim = 384;
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  index::IndexOptions options;
  options.dim = kDim;
  options.build_bm25 = false;
  auto idx = std::make_shared<index::DocumentIndex>(options);
  Matrix dense(200, kDim);
  for (float& v : dense.values()) v = normal(rng);
  std::vector<std::string> doc_ids(200);
  for (std::size_t i = 0; i < doc_ids.size(); ++i) doc_ids[i] = "d" + std::to_string(i);
  idx->add(std::vector<std::string>(200), doc_ids, dense);
  EncodedQueries q;
  q.dense = Matrix(200, kDim);
  q.dense.values() = dense.values();  // every document asked for itself
  q.texts.assign(200, "");
  SearchOptions search;
  search.k = 1;
  for (const auto& hits : Retriever(idx, nullptr).search_encoded(q, search)) {
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_LE(hits[0].cosine, 1.0f) << hits[0].id;
    EXPECT_GE(hits[0].cosine, 1.0f - 1e-6f) << hits[0].id;
  }
}

// Candidates found by another store (e.g. Milvus) get the very scores, order and exclusion
// Retriever::search gives the index's own.
TEST(Rerank, CandidatesFoundElsewhereRankAsTheRetrieverRanksThem) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.k = 3;
  options.scorer = Scorer::kSparsity;
  options.alpha = 1.0f;
  f.queries.exclude = {{"other"}};
  const auto expected = retriever.search_encoded(f.queries, options)[0];

  SearchOptions by_cosine;
  by_cosine.k = 4;
  EncodedQueries unfiltered = f.queries;
  unfiltered.exclude.clear();
  std::vector<float> sparse;
  // The other store's order: by cosine.
  const CandidateRows rows = candidates_of(f, retriever.search_encoded(unfiltered, by_cosine)[0], sparse);
  const auto hits = rerank(rows, f.queries.sparse.row(0), options, nullptr, {"other"});
  ASSERT_EQ(ids(hits), ids(expected));
  for (std::size_t i = 0; i < hits.size(); ++i) {
    EXPECT_FLOAT_EQ(hits[i].score, expected[i].score);
    EXPECT_FLOAT_EQ(hits[i].sparsity, expected[i].sparsity);
    EXPECT_EQ(hits[i].slot, -1);
  }
}

TEST(Rerank, TiesKeepTheStoresOrderAndAlphaIsResolvedLikeSearch) {
  CandidateRows rows;
  rows.ids = {"b", "a", "c"};
  rows.stage1 = {0.5f, 0.5f, 0.9f};
  SearchOptions options;
  options.k = 2;
  const auto hits = rerank(rows, nullptr, options);
  EXPECT_EQ(ids(hits), (std::vector<std::string>{"c", "b"}));
  options.scorer = Scorer::kSparsity;
  EXPECT_THROW(rerank(rows, nullptr, options), InvalidArgument);  // no Es rows
  options.scorer = Scorer::kMaxSim;
  EXPECT_THROW(rerank(rows, nullptr, options), InvalidArgument);  // token rows live in an index
  rows.stage1.pop_back();
  options.scorer = Scorer::kCosine;
  EXPECT_THROW(rerank(rows, nullptr, options), InvalidArgument);  // lengths differ
}

TEST(SparsityScale, AShortDifferenceCountsInProportionToItsLengthALongOneFully) {
  // x = (0.06, 0, 0, 0): Hoyer 1 (one coordinate), |x|_2 = 0.06.
  const float query[4] = {0.06f, 0.0f, 0.0f, 0.0f}, origin[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  scoring::SparsityOptions gate;
  float plain = 0.0f, gated = 0.0f;
  scoring::sparsity_scores(MatrixView(query, 1, 4), MatrixView(origin, 1, 4), gate, &plain);
  gate.scale = 0.2f;
  scoring::sparsity_scores(MatrixView(query, 1, 4), MatrixView(origin, 1, 4), gate, &gated);
  EXPECT_FLOAT_EQ(plain, 1.0f);
  EXPECT_NEAR(gated, 0.3f, 1e-6);  // min(1, 0.06 / 0.2)
  gate.scale = 0.05f;              // shorter than the difference: no damping
  scoring::sparsity_scores(MatrixView(query, 1, 4), MatrixView(origin, 1, 4), gate, &gated);
  EXPECT_FLOAT_EQ(gated, 1.0f);
  gate.scale = -1.0f;
  EXPECT_THROW(scoring::sparsity_scores(MatrixView(query, 1, 4), MatrixView(origin, 1, 4), gate, &gated),
               InvalidArgument);
}

TEST(SparsityScale, RerankAppliesAGivenScaleAndDescribesIt) {
  // Two candidates at equal cosine: "near" differs from the query by a short one-coordinate step
  // (Hoyer 1), "far" by a long two-coordinate one (Hoyer ~0.59). Without a gate the short step
  // wins; gated at tau 0.5 the short step's sparsity shrinks to 0.2 and the long one wins.
  CandidateRows rows;
  rows.ids = {"near", "far"};
  rows.stage1 = {0.5f, 0.5f};
  const float es[8] = {0.1f, 0.0f, 0.0f, 0.0f, 0.6f, 0.6f, 0.0f, 0.0f};
  const float query[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  rows.sparse = es;
  rows.sparse_dim = 4;
  SearchOptions options;
  options.k = 2;
  options.scorer = Scorer::kSparsity;
  options.alpha = 1.0f;
  EXPECT_EQ(ids(rerank(rows, query, options)), (std::vector<std::string>{"near", "far"}));
  options.sparsity.scale = 0.5f;
  const auto gated = rerank(rows, query, options);
  EXPECT_EQ(ids(gated), (std::vector<std::string>{"far", "near"}));
  EXPECT_NEAR(gated[1].sparsity, 0.2f, 1e-6);
  EXPECT_EQ(choose_sparsity_scale(options.sparsity.scale, nullptr).source, AlphaChoice::Source::kGiven);
  EXPECT_EQ(describe_scoring(options, choose_alpha(options.alpha, nullptr),
                             choose_sparsity_scale(options.sparsity.scale, nullptr)),
            "scorer sparsity (hoyer), alpha 1 (given), scale 0.5 (given)");
  EXPECT_EQ(choose_sparsity_scale(std::nullopt, nullptr).describe(), "");  // no gate, nothing to say
  EXPECT_THROW(choose_sparsity_scale(std::numeric_limits<float>::quiet_NaN(), nullptr), InvalidArgument);
}

TEST(Retriever, AnUnsetAlphaIsTheOneEsRecordsElseTheDefaultAndIsReported) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  SearchOptions options;
  options.scorer = Scorer::kSparsity;
  EXPECT_EQ(retriever.alpha_for(options).source, AlphaChoice::Source::kDefault);
  EXPECT_EQ(retriever.alpha_for(options).value, kDefaultAlpha);
  options.alpha = 2.5f;
  EXPECT_EQ(retriever.alpha_for(options).source, AlphaChoice::Source::kGiven);
  EXPECT_EQ(describe_scoring(options, retriever.alpha_for(options)), "scorer sparsity (hoyer), alpha 2.5 (given)");
}

// The stance signs the sparsity term: attack lifts the sparse difference ("contra"), support the
// dense one ("para"); the query's own text stays at the bottom either way.
TEST(Stance, TheRequestedStanceSignsTheSparsityTermAndTheGuardSinksTheQueryEitherWay) {
  auto f = make_fixture();
  f.index->add({"do cats sleep"}, {"itself"}, rows({{1, 0, 0, 0}}), rows({{1, 0, 0, 0}}));
  Retriever retriever(f.index, nullptr);
  const auto attack = retriever.search_encoded(f.queries, sparsity_search(5, Stance::kAttack))[0];
  EXPECT_EQ(ids(attack), (std::vector<std::string>{"contra", "para", "far", "other", "itself"}));
  const auto support = retriever.search_encoded(f.queries, sparsity_search(5, Stance::kSupport))[0];
  EXPECT_EQ(ids(support), (std::vector<std::string>{"para", "contra", "far", "other", "itself"}));
  for (const auto& h : support) {
    if (h.id != "itself") {
      EXPECT_NEAR(h.score, h.cosine - h.sparsity, 1e-6) << h.id;
    }
  }
  // A reading recorded per query wins over options.stance (kFromQuery reads the instruction).
  f.queries.stances = {read_stance("Show me a point that backs this up: do cats sleep")};
  EXPECT_EQ(ids(retriever.search_encoded(f.queries, sparsity_search(5, Stance::kFromQuery))[0]), ids(support));
  f.queries.stances = {StanceReading{}, StanceReading{}};
  EXPECT_THROW(retriever.search_encoded(f.queries, sparsity_search(5, Stance::kFromQuery)), InvalidArgument);
}

TEST(Stance, RerankTakesTheQuerysStanceLikeSearch) {
  auto f = make_fixture();
  Retriever retriever(f.index, nullptr);
  const auto expected = retriever.search_encoded(f.queries, sparsity_search(4, Stance::kSupport))[0];
  std::vector<float> sparse;
  const CandidateRows rows = candidates_of(f, expected, sparse);
  const auto from_query = sparsity_search(4, Stance::kFromQuery);
  EXPECT_EQ(ids(rerank(rows, f.queries.sparse.row(0), from_query, nullptr, {}, Stance::kSupport)), ids(expected));
  EXPECT_EQ(ids(rerank(rows, f.queries.sparse.row(0), sparsity_search(4, Stance::kSupport))), ids(expected));
  EXPECT_EQ(ids(rerank(rows, f.queries.sparse.row(0), from_query))[0], "contra");  // no stance given: attack
}
