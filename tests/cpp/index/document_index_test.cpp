// DocumentIndex: stage-1 search for every kind, add/remove bookkeeping, validation,
// stage-2 accessors and the concurrency contract.
#include "counterpoint/index/document_index.h"
#include "index_test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <atomic>
#include <thread>

#include "counterpoint/core/errors.h"

namespace counterpoint::index {
namespace {

using ::testing::HasSubstr;

using test_support::params_for;
using test_support::random_rows;

std::vector<std::string> numbered(const std::string& prefix, std::size_t n, std::size_t first = 0) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(first + i));
  return out;
}

IndexOptions options_of(std::size_t dim, const std::string& kind = "flat") {
  IndexOptions o;
  o.dim = dim;
  o.kind = kind;
  return o;
}

// Issue 28: "--kind HNSW" was refused, naming IndexOptions::kind.
TEST(DocumentIndexKinds, KindsAreCaseInsensitiveAndAWrongOneIsNamedInTheUsersTerms) {
  EXPECT_EQ(DocumentIndex(options_of(4, "HNSW")).options().kind, "hnsw");
  try {
    DocumentIndex index(options_of(4, "hnws"));
    ADD_FAILURE() << "kind hnws was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "index kind 'hnws' is not one of flat, hnsw, ivf, ivfpq; did you mean 'hnsw'?");
  }
}

DocumentIndex filled(IndexOptions options, const Matrix& rows) {
  DocumentIndex index(std::move(options));
  index.add(numbered("text ", rows.rows()), numbered("d", rows.rows()), rows);
  return index;
}

// Exact top-k by brute force, ties to the lower slot.
std::vector<Slot> exact_top(const Matrix& rows, const float* query, std::size_t k) {
  std::vector<std::pair<float, Slot>> scored;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    float dot = 0;
    for (std::size_t c = 0; c < rows.cols(); ++c) dot += rows(r, c) * query[c];
    scored.push_back({-dot, Slot(r)});
  }
  std::sort(scored.begin(), scored.end());
  std::vector<Slot> out;
  for (std::size_t i = 0; i < k; ++i) out.push_back(scored[i].second);
  return out;
}

double recall(const SearchResult& got, const Matrix& corpus, const Matrix& queries, std::size_t k) {
  std::size_t found = 0;
  for (std::size_t q = 0; q < queries.rows(); ++q) {
    const auto truth = exact_top(corpus, queries.row(q), k);
    const std::set<Slot> want(truth.begin(), truth.end());
    for (std::size_t r = 0; r < k; ++r) found += want.count(got.slot(q, r));
  }
  return double(found) / double(queries.rows() * k);
}

TEST(DocumentIndex, FlatSearchIsExact) {
  const Matrix corpus = random_rows(500, 16, 1);
  const Matrix queries = random_rows(20, 16, 2);
  const DocumentIndex index = filled(options_of(16), corpus);
  const SearchResult result = index.search(queries, 10);
  ASSERT_EQ(result.num_queries, 20u);
  ASSERT_EQ(result.k, 10u);
  for (std::size_t q = 0; q < queries.rows(); ++q) {
    const auto truth = exact_top(corpus, queries.row(q), 10);
    for (std::size_t r = 0; r < 10; ++r) EXPECT_EQ(result.slot(q, r), truth[r]) << "query " << q << " rank " << r;
    EXPECT_GE(result.score(q, 0), result.score(q, 9));
  }
}

TEST(DocumentIndex, SlotsFollowInsertionOrderAndScoresAreCosines) {
  DocumentIndex index(options_of(2));
  const Matrix rows(3, 2, {3, 0, 0, 2, 1, 1});  // normalised on the way in
  index.add({"ta", "tb", "tc"}, {"a", "b", "c"}, rows);
  EXPECT_EQ(index.slot_of("c"), Slot(2));
  EXPECT_EQ(index.id(1), "b");
  EXPECT_EQ(index.text(2), "tc");
  EXPECT_FLOAT_EQ(index.dense_row(0)[0], 1.0f);
  const Matrix query(1, 2, {10, 0});
  const SearchResult r = index.search(query, 3);
  EXPECT_EQ(r.slot(0, 0), 0);
  EXPECT_NEAR(r.score(0, 0), 1.0f, 1e-6);
  EXPECT_EQ(r.slot(0, 1), 2);
  EXPECT_NEAR(r.score(0, 1), std::sqrt(0.5f), 1e-6);
  EXPECT_EQ(r.slot(0, 2), 1);
  EXPECT_NEAR(r.score(0, 2), 0.0f, 1e-6);
}

TEST(DocumentIndex, HnswRecallIsHighWithLargeEfSearch) {
  const Matrix corpus = random_rows(3000, 32, 3);
  const Matrix queries = random_rows(30, 32, 4);
  IndexOptions o = options_of(32, "hnsw");
  o.hnsw_m = 16;
  o.hnsw_ef_construction = 80;
  const DocumentIndex index = filled(o, corpus);
  EXPECT_GE(recall(index.search(queries, 10, {256, 0}), corpus, queries, 10), 0.95);
  // A tiny ef (raised to k internally) still returns k results.
  const SearchResult small = index.search(queries, 10, {1, 0});
  for (std::size_t q = 0; q < queries.rows(); ++q) EXPECT_GE(small.slot(q, 9), 0);
}

TEST(DocumentIndex, IvfRecallGrowsWithNprobeAndIsExactWithAllLists) {
  const Matrix corpus = random_rows(4000, 32, 5);
  const Matrix queries = random_rows(30, 32, 6);
  IndexOptions o = options_of(32, "ivf");
  o.ivf_nlist = 32;
  const DocumentIndex index = filled(o, corpus);
  ASSERT_TRUE(index.is_trained());
  const double one = recall(index.search(queries, 10, {0, 1}), corpus, queries, 10);
  const double all = recall(index.search(queries, 10, {0, 32}), corpus, queries, 10);
  EXPECT_LT(one, all);
  EXPECT_DOUBLE_EQ(all, 1.0);
  EXPECT_GE(recall(index.search(queries, 10, {0, 8}), corpus, queries, 10), 0.6);
}

TEST(DocumentIndex, IvfPqReturnsApproximateNeighbours) {
  const Matrix corpus = random_rows(2000, 32, 7);
  const Matrix queries = random_rows(20, 32, 8);
  IndexOptions o = options_of(32, "ivfpq");
  o.ivf_nlist = 8;
  o.pq_m = 8;
  o.pq_bits = 5;
  const DocumentIndex index = filled(o, corpus);
  ASSERT_TRUE(index.is_trained());
  EXPECT_GE(recall(index.search(queries, 10, {0, 8}), corpus, queries, 10), 0.3);
  // Stage 2 still sees the exact stored rows.
  EXPECT_FLOAT_EQ(index.dense_row(17)[3], corpus(17, 3));
}

TEST(DocumentIndex, IvfSearchesExactlyUntilItHasEnoughRowsToTrain) {
  IndexOptions o = options_of(8, "ivf");
  DocumentIndex index(o);
  EXPECT_EQ(index.min_training_rows(), 1024u);
  const Matrix first = random_rows(100, 8, 9);
  index.add(numbered("t", 100), numbered("a", 100), first);
  EXPECT_FALSE(index.is_trained());
  const Matrix queries = random_rows(3, 8, 10);
  EXPECT_DOUBLE_EQ(recall(index.search(queries, 5), first, queries, 5), 1.0);
  const Matrix more = random_rows(1000, 8, 11);
  index.add(numbered("t", 1000), numbered("b", 1000), more);
  EXPECT_TRUE(index.is_trained());
  EXPECT_EQ(index.size(), 1100u);
}

TEST(DocumentIndex, ExplicitTrainNeedsEnoughRows) {
  IndexOptions o = options_of(8, "ivfpq");
  o.ivf_nlist = 4;
  o.pq_m = 2;
  o.pq_bits = 6;
  DocumentIndex index(o);
  EXPECT_EQ(index.required_training_rows(), 64u);
  try {
    index.train(random_rows(50, 8, 12));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("at least 64 training rows, got 50"));
  }
  index.train(random_rows(100, 8, 13));
  EXPECT_TRUE(index.is_trained());
}

// What a caller derived from an index (stage-1 candidates kept for rescoring) is current while the
// generation is unchanged: searches leave it alone; add, remove and train each change it; two
// indexes, a loaded one included, never share one.
TEST(DocumentIndex, GenerationChangesWithEveryAddRemoveAndTrainOnly) {
  IndexOptions o = options_of(8, "ivf");
  o.ivf_nlist = 4;
  DocumentIndex index(o), other(o);
  EXPECT_NE(index.generation(), other.generation());
  std::set<std::uint64_t> seen{index.generation(), other.generation()};
  const Matrix rows = random_rows(200, 8, 21);
  index.add(numbered("t", 200), numbered("d", 200), rows);
  EXPECT_TRUE(seen.insert(index.generation()).second);
  const std::uint64_t before_search = index.generation();
  index.search(rows, 3);
  EXPECT_EQ(index.generation(), before_search);
  index.train(rows);
  EXPECT_TRUE(seen.insert(index.generation()).second);
  index.remove({"d0"});
  EXPECT_TRUE(seen.insert(index.generation()).second);
  const std::uint64_t before_failed_remove = index.generation();
  EXPECT_THROW(index.remove({"nope"}), InvalidArgument);
  EXPECT_EQ(index.generation(), before_failed_remove);
}

// A parameter of another kind would change nothing: refused, as FAISS refuses another index
// type's SearchParameters, so a caller never believes a search was tuned that was not.
TEST(DocumentIndex, RefusesTheSearchParametersOfAnotherKind) {
  const Matrix corpus = random_rows(300, 16, 21);
  const auto refusal = [&](const std::string& kind, SearchParams params) {
    try {
      filled(options_of(16, kind), corpus).search(MatrixView(corpus.row(0), 1, 16), 1, params);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("searched");
  };
  EXPECT_EQ(refusal("flat", {64, 0}), "ef_search applies to an hnsw index; this index is flat");
  EXPECT_EQ(refusal("ivf", {64, 0}), "ef_search applies to an hnsw index; this index is ivf");
  EXPECT_EQ(refusal("flat", {0, 8}), "nprobe applies to an ivf or ivfpq index; this index is flat");
  EXPECT_EQ(refusal("hnsw", {0, 8}), "nprobe applies to an ivf or ivfpq index; this index is hnsw");
  EXPECT_EQ(refusal("hnsw", {64, 0}), "searched");
  EXPECT_EQ(refusal("ivf", {0, 8}), "searched");
}

TEST(DocumentIndex, RemovedDocumentsNeverAppearAndIdsCanComeBack) {
  for (const std::string kind : {"flat", "hnsw", "ivf"}) {
    SCOPED_TRACE(kind);
    const Matrix corpus = random_rows(1200, 16, 14);
    DocumentIndex index = filled(options_of(16, kind), corpus);
    std::vector<std::string> doomed;
    for (std::size_t i = 0; i < 1200; i += 2) doomed.push_back("d" + std::to_string(i));
    index.remove(doomed);
    EXPECT_EQ(index.size(), 600u);
    EXPECT_FALSE(index.contains("d0"));
    EXPECT_FALSE(index.is_live(0));
    const SearchParams params = params_for(kind, 64, 64);
    const SearchResult r = index.search(corpus, 5, params);
    for (Slot s : r.slots) {
      ASSERT_GE(s, 0);
      EXPECT_EQ(s % 2, 1) << "removed slot " << s << " returned";
    }
    // Re-adding d0 gives it a fresh slot, and the query of its own row finds it first.
    index.add({"back"}, {"d0"}, MatrixView(corpus.row(0), 1, 16));
    EXPECT_EQ(index.slot_of("d0"), Slot(1200));
    EXPECT_EQ(index.text(1200), "back");
    EXPECT_EQ(index.search(MatrixView(corpus.row(0), 1, 16), 1, params).slot(0, 0), 1200);
  }
}

TEST(DocumentIndex, RemoveIsAllOrNothing) {
  DocumentIndex index = filled(options_of(4), random_rows(3, 4, 15));
  try {
    index.remove({"d0", "nope"});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown id 'nope'"));
  }
  EXPECT_TRUE(index.contains("d0"));
  EXPECT_THROW(index.remove({"d1", "d1"}), InvalidArgument);
  EXPECT_EQ(index.size(), 3u);
}

TEST(DocumentIndex, PadsWithMinusOneWhenFewerDocumentsExist) {
  DocumentIndex index(options_of(4));
  const Matrix query = random_rows(2, 4, 16);
  const SearchResult empty = index.search(query, 3);
  EXPECT_EQ(empty.slots, std::vector<Slot>(6, -1));
  EXPECT_TRUE(std::isinf(empty.scores[0]) && empty.scores[0] < 0);
  index.add({"", ""}, {"a", "b"}, random_rows(2, 4, 17));
  index.remove({"a"});
  const SearchResult r = index.search(query, 3);
  EXPECT_EQ(r.slots, (std::vector<Slot>{1, -1, -1, 1, -1, -1}));
  EXPECT_THROW(index.search(query, 0), InvalidArgument);
}

TEST(DocumentIndex, DuplicateIdsAreRejectedBeforeAnythingChanges) {
  DocumentIndex index = filled(options_of(4), random_rows(2, 4, 18));
  const Matrix rows = random_rows(2, 4, 19);
  try {
    index.add({"", ""}, {"x", "x"}, rows);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'x' appears twice"));
  }
  try {
    index.add({"", ""}, {"new", "d1"}, rows);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'d1' is already in the index"));
  }
  EXPECT_FALSE(index.contains("new"));
  EXPECT_EQ(index.slot_capacity(), 2u);
}

TEST(DocumentIndex, RejectsBadRowsWithClearMessages) {
  IndexOptions o = options_of(4);
  o.sparse_dim = 3;
  DocumentIndex index(o);
  Matrix dense = random_rows(1, 4, 20);
  const Matrix sparse = random_rows(1, 3, 21);
  EXPECT_THROW(index.add({"t"}, {"a"}, random_rows(1, 5, 22), sparse), InvalidArgument);
  EXPECT_THROW(index.add({"t"}, {"a"}, dense, random_rows(1, 2, 23)), InvalidArgument);
  EXPECT_THROW(index.add({"t"}, {"a"}, dense), InvalidArgument);             // sparse rows missing
  EXPECT_THROW(index.add({"t", "u"}, {"a", "b"}, dense, sparse), InvalidArgument);  // row counts
  EXPECT_THROW(index.add({"t"}, {""}, dense, sparse), InvalidArgument);
  EXPECT_THROW(index.add({std::string("\xc3", 1)}, {"a"}, dense, sparse), InvalidArgument);
  dense(0, 2) = std::nanf("");
  try {
    index.add({"t"}, {"a"}, dense, sparse);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("dense"));
  }
  EXPECT_EQ(index.size(), 0u);
  Matrix query(1, 4, 0.5f);
  query(0, 1) = INFINITY;
  EXPECT_THROW(index.search(query, 1), InvalidArgument);
  EXPECT_THROW(index.search(random_rows(1, 3, 24), 1), InvalidArgument);
  EXPECT_THROW(index.id(0), InvalidArgument);
  EXPECT_THROW(DocumentIndex(options_of(0)), InvalidArgument);
  EXPECT_THROW(DocumentIndex(options_of(4, "lsh")), InvalidArgument);
  IndexOptions pq = options_of(10, "ivfpq");
  pq.pq_m = 4;
  EXPECT_THROW(DocumentIndex{pq}, InvalidArgument);
}

TEST(DocumentIndex, SparseRowsRoundTripInFloat32AndFloat16) {
  const Matrix dense = random_rows(3, 4, 25);
  const Matrix sparse(3, 2, {0.5f, -0.25f, 1.0f / 3.0f, 0.1f, 60000.0f, -1e-3f});
  for (const auto storage : {IndexOptions::SparseStorage::kFloat32, IndexOptions::SparseStorage::kFloat16}) {
    IndexOptions o = options_of(4);
    o.sparse_dim = 2;
    o.sparse_storage = storage;
    DocumentIndex index(o);
    index.add({"", "", ""}, {"a", "b", "c"}, dense, sparse);
    const Slot slots[] = {2, 0, 1};
    float out[6];
    index.gather_sparse(slots, 3, out);
    const bool half = storage == IndexOptions::SparseStorage::kFloat16;
    EXPECT_FLOAT_EQ(out[0], 60000.0f);
    EXPECT_NEAR(out[1], -1e-3f, half ? 1e-6 : 0);
    EXPECT_FLOAT_EQ(out[2], 0.5f);
    EXPECT_FLOAT_EQ(out[3], -0.25f);
    EXPECT_NEAR(out[4], 1.0f / 3.0f, half ? 1e-4 : 0);  // float16 keeps 11 significant bits
    EXPECT_NEAR(out[5], 0.1f, half ? 1e-4 : 0);
    float dense_out[8];
    index.gather_dense(slots, 2, dense_out);
    EXPECT_FLOAT_EQ(dense_out[0], dense(2, 0));
    EXPECT_FLOAT_EQ(dense_out[4], dense(0, 0));
    const Slot bad[] = {0, 7};
    EXPECT_THROW(index.gather_sparse(bad, 2, out), InvalidArgument);
  }
  IndexOptions o = options_of(4);
  o.sparse_dim = 2;
  o.sparse_storage = IndexOptions::SparseStorage::kFloat16;
  DocumentIndex index(o);
  EXPECT_THROW(index.add({""}, {"a"}, random_rows(1, 4, 26), Matrix(1, 2, 70000.0f)), InvalidArgument);
}

TEST(DocumentIndex, StoresTokenEmbeddingsPerDocument) {
  IndexOptions o = options_of(4);
  o.store_token_embeddings = true;
  o.token_dim = 2;
  DocumentIndex index(o);
  std::vector<Matrix> tokens{Matrix(3, 2, 1.0f), Matrix(1, 2, {0.25f, 0.75f})};
  index.add({"", ""}, {"a", "b"}, random_rows(2, 4, 27), {}, tokens);
  EXPECT_EQ(index.token_embeddings(0).rows, 3u);
  EXPECT_FLOAT_EQ(index.token_embeddings(1).row(0)[1], 0.75f);
  EXPECT_THROW(index.add({""}, {"c"}, random_rows(1, 4, 28)), InvalidArgument);  // tokens missing
  EXPECT_THROW(index.add({""}, {"c"}, random_rows(1, 4, 28), {}, {Matrix(1, 3)}), InvalidArgument);
  DocumentIndex plain(options_of(4));
  EXPECT_THROW(plain.add({""}, {"c"}, random_rows(1, 4, 28), {}, {Matrix(1, 2)}), InvalidArgument);
}

TEST(DocumentIndex, Bm25FollowsAddsAndRemoves) {
  DocumentIndex index(options_of(2));
  index.add({"The cat sat.", "the dog sat on the mat", "Cats and dogs!"}, {"a", "b", "c"}, random_rows(3, 2, 29));
  auto hits = index.search_bm25("cat sat", 5);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].slot, 0);
  EXPECT_NEAR(hits[0].score, 1.5229737, 1e-5);
  index.remove({"a"});
  hits = index.search_bm25("cat sat", 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].slot, 1);
  IndexOptions o = options_of(2);
  o.build_bm25 = false;
  EXPECT_THROW(DocumentIndex(o).search_bm25("x", 1), InvalidArgument);
}

TEST(DocumentIndex, IteratesLiveSlotsInOrder) {
  DocumentIndex index = filled(options_of(2), random_rows(5, 2, 30));
  index.remove({"d1", "d3"});
  EXPECT_EQ(index.live_slots(), (std::vector<Slot>{0, 2, 4}));
}

TEST(DocumentIndex, ConcurrentSearchesGiveTheSerialResults) {
  for (const std::string kind : {"flat", "hnsw", "ivf"}) {
    SCOPED_TRACE(kind);
    const Matrix corpus = random_rows(2000, 16, 31);
    const Matrix queries = random_rows(64, 16, 32);
    DocumentIndex index = filled(options_of(16, kind), corpus);
    index.remove({"d5", "d6"});
    std::vector<SearchResult> serial;
    for (std::size_t q = 0; q < queries.rows(); ++q) {
      serial.push_back(index.search(MatrixView(queries.row(q), 1, 16), 20));
    }
    std::vector<std::thread> threads;
    std::vector<int> mismatches(8, 0);
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < 5; ++round) {
          for (std::size_t q = 0; q < queries.rows(); ++q) {
            const SearchResult r = index.search(MatrixView(queries.row(q), 1, 16), 20);
            if (r.slots != serial[q].slots || r.scores != serial[q].scores) ++mismatches[t];
            float row[16];
            const Slot s = r.slot(0, 0);
            index.gather_dense(&s, 1, row);
            if (row[0] != index.dense_row(s)[0] || index.id(s).empty()) ++mismatches[t];
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches, std::vector<int>(8, 0));
  }
}

TEST(DocumentIndex, WritersAndReadersDoNotRace) {
  const Matrix corpus = random_rows(400, 8, 33);
  DocumentIndex index = filled(options_of(8), corpus);
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 8; ++t) {
    readers.emplace_back([&] {
      while (!done) {
        const SearchResult r = index.search(MatrixView(corpus.row(7), 1, 8), 5);
        if (r.slot(0, 0) != 7) ++bad;
      }
    });
  }
  for (int i = 0; i < 50; ++i) {
    const std::string id = "extra" + std::to_string(i);
    index.add({"x"}, {id}, random_rows(1, 8, 100 + unsigned(i)));
    index.remove({id});
  }
  done = true;
  for (auto& th : readers) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(index.size(), 400u);
}

}  // namespace
}  // namespace counterpoint::index

namespace counterpoint::index {
namespace {

// A flat index takes a large batch a bounded chunk at a time (no whole-batch copy): every row,
// on both sides of each chunk boundary, is stored normalised and searched exactly.
TEST(DocumentIndex, ALargeBatchIsAddedInChunksWithEveryRowStoredAndSearchable) {
  const std::size_t n = 40000, d = 4;  // three chunks of 16,384 rows
  Matrix rows = random_rows(n, d, 41);
  for (float& v : rows.values()) v *= 3.0f;  // not unit length: the index normalises
  DocumentIndex index = filled(options_of(d), rows);
  ASSERT_EQ(index.size(), n);
  for (const std::size_t r : {std::size_t(0), std::size_t(16383), std::size_t(16384), std::size_t(32768), n - 1}) {
    double norm = 0;
    for (std::size_t c = 0; c < d; ++c) norm += double(rows(r, c)) * rows(r, c);
    for (std::size_t c = 0; c < d; ++c) {
      EXPECT_NEAR(index.dense_row(Slot(r))[c], rows(r, c) / std::sqrt(norm), 1e-6) << "row " << r;
    }
  }
  const Matrix queries = random_rows(3, d, 42);
  for (std::size_t q = 0; q < queries.rows(); ++q) {
    EXPECT_EQ(index.search(MatrixView(queries.row(q), 1, d), 5).slots, exact_top(rows, queries.row(q), 5));
  }
}

}  // namespace
}  // namespace counterpoint::index
