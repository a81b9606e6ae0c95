// Explaining a hit: each side's tokens ranked by how badly they align with the other side (worst
// first, special pieces left out), and the Es coordinates ranked by their share of the squared
// difference; the cosine and sparsity are the ones the search reports.
#include "counterpoint/retrieval/explain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "counterpoint/core/errors.h"
#include "counterpoint/encoder/encoder.h"

namespace counterpoint::retrieval {
namespace {

const std::string kBertTiny = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";

TEST(Explain, RanksTokensWorstAlignedFirstAndCoordinatesByTheirShare) {
  std::shared_ptr<Encoder> encoder = Encoder::load(kBertTiny);
  auto index = std::make_shared<index::DocumentIndex>(index_options_for(*encoder, encoder.get()));
  add_documents(*index, {"the cat sleeps on the mat", "a dog barks"}, {"a", "b"}, *encoder, encoder.get());
  Retriever retriever(index, encoder, encoder);
  const std::string query = "the cat never sleeps on the mat";
  const Explanation e = explain(retriever, query, "a", 3, 4);
  EXPECT_EQ(e.passage, "the cat sleeps on the mat");
  ASSERT_FALSE(e.query_tokens.empty());
  EXPECT_LE(e.query_tokens.size(), 3u);
  for (std::size_t i = 1; i < e.query_tokens.size(); ++i) {
    EXPECT_LE(e.query_tokens[i - 1].best_cosine, e.query_tokens[i].best_cosine);
  }
  for (const auto& t : e.query_tokens) EXPECT_NE(t.piece.front(), '[') << t.piece;
  ASSERT_EQ(e.coordinates.size(), 4u);
  float total = 0;
  for (std::size_t i = 0; i < e.coordinates.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(e.coordinates[i - 1].share, e.coordinates[i].share);
    }
    total += e.coordinates[i].share;
  }
  EXPECT_NEAR(e.top_share, total, 1e-6);
  EXPECT_LE(e.top_share, 1.0f + 1e-6f);

  SearchOptions search;
  search.scorer = Scorer::kSparsity;
  search.k = 2;
  search.candidates = 2;
  const auto results = retriever.search({query}, search);
  for (const Hit& h : results[0]) {
    if (h.id != "a") continue;
    EXPECT_NEAR(e.cosine, h.cosine, 1e-5);
    EXPECT_NEAR(e.sparsity, h.sparsity, 1e-5);
  }
  EXPECT_NE(describe(e).find("query tokens aligned worst:"), std::string::npos);
  EXPECT_THROW(explain(retriever, query, "missing"), InvalidArgument);
  EXPECT_THROW(explain(retriever, query, "a", 0), InvalidArgument);
}

TEST(Explain, ReadsTheQueryWithThePrefixTheSearchGaveIt) {
  std::shared_ptr<Encoder> encoder = Encoder::load(kBertTiny);
  auto index = std::make_shared<index::DocumentIndex>(index_options_for(*encoder, encoder.get()));
  add_documents(*index, {"the cat sleeps on the mat", "a dog barks"}, {"a", "b"}, *encoder, encoder.get());
  Retriever retriever(index, encoder, encoder);
  const std::string query = "the cat never sleeps on the mat", prefix = "find evidence: ";
  SearchOptions search;
  search.scorer = Scorer::kSparsity;
  search.k = search.candidates = 2;
  const auto results = retriever.search({query}, search, &prefix);
  const auto hit = std::find_if(results[0].begin(), results[0].end(), [](const Hit& h) { return h.id == "a"; });
  ASSERT_NE(hit, results[0].end());

  const Explanation prefixed = explain(retriever, query, "a", 50, 4, {}, Stance::kFromQuery, &prefix);
  EXPECT_NEAR(prefixed.cosine, hit->cosine, 1e-5);
  EXPECT_NEAR(prefixed.sparsity, hit->sparsity, 1e-5);
  const auto has_evidence = [](const Explanation& e) {
    return std::any_of(e.query_tokens.begin(), e.query_tokens.end(),
                       [](const TokenAlignment& t) { return t.piece == "evidence"; });
  };
  EXPECT_TRUE(has_evidence(prefixed));
  const Explanation plain = explain(retriever, query, "a", 50, 4);
  EXPECT_FALSE(has_evidence(plain));
  EXPECT_GT(std::fabs(plain.cosine - hit->cosine), 1e-5);
}

}  // namespace
}  // namespace counterpoint::retrieval
