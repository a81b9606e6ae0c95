// Corpus cleaning: each trusted text removes its top hits under cos + alpha * sparsity (or every
// hit above a threshold), a passage that is itself trusted is never removed, and the cleaned
// corpus and report go to a new directory, never over an existing one.
#include "counterpoint/retrieval/corpus_cleaning.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/encoder/encoder.h"

namespace counterpoint::retrieval {
namespace {

namespace fs = std::filesystem;
const std::string kBertTiny = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/bert_tiny";

struct Corpus {
  std::vector<data::Document> documents;
  std::shared_ptr<Encoder> encoder;
  std::shared_ptr<index::DocumentIndex> index;
};

Corpus small_corpus() {
  Corpus c;
  c.documents = {{"a", "", "the cat sleeps"},      {"b", "", "the cat never sleeps"}, {"c", "", "a dog barks"},
                 {"d", "", "dogs never bark"},     {"e", "", "rain falls today"},    {"f", "", "the sun shines"}};
  c.encoder = Encoder::load(kBertTiny);
  c.index = std::make_shared<index::DocumentIndex>(index_options_for(*c.encoder, c.encoder.get()));
  std::vector<std::string> texts, ids;
  for (const auto& d : c.documents) texts.push_back(d.text), ids.push_back(d.id);
  add_documents(*c.index, texts, ids, *c.encoder, c.encoder.get());
  return c;
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = std::string(COUNTERPOINT_BINARY_DIR) + "/corpus_cleaning_test/" + name;
  fs::remove_all(dir);
  fs::create_directories(fs::path(dir).parent_path());
  return dir;
}

TEST(CorpusCleaning, EachTrustedTextRemovesItsTopHitsButNeverATrustedPassage) {
  const Corpus c = small_corpus();
  Retriever retriever(c.index, c.encoder, c.encoder);
  CleaningOptions options;
  options.top = 2;
  options.alpha = 1.0f;
  const std::vector<std::string> trusted = {"the cat sleeps", "a dog barks"};  // both are passages a and c
  const CleaningReport report = find_contradicted(retriever, trusted, options);
  EXPECT_EQ(report.protected_passages, 2u);
  EXPECT_EQ(report.documents, 6u);
  std::set<std::string> removed;
  for (const Removal& r : report.removed) {
    EXPECT_TRUE(removed.insert(r.id).second) << r.id << " reported twice";
    EXPECT_NE(r.id, "a");
    EXPECT_NE(r.id, "c");
    EXPECT_LT(r.rank, 2u);
    EXPECT_FLOAT_EQ(r.score, r.cosine + 1.0f * r.sparsity);
  }
  EXPECT_GE(report.removed.size(), 2u);  // two per trusted text, overlaps counted once
  EXPECT_LE(report.removed.size(), 4u);
  // The same removals as the trusted texts' own top-2 searches with the trusted passages excluded.
  SearchOptions search;
  search.scorer = Scorer::kSparsity;
  search.alpha = 1.0f;
  search.k = 2;
  search.candidates = 6;
  EncodedQueries queries = retriever.encode_queries(trusted, search);
  queries.exclude = {{"a", "c"}, {"a", "c"}};
  std::set<std::string> expected;
  for (const auto& hits : retriever.search_encoded(queries, search))
    for (const Hit& h : hits) expected.insert(h.id);
  EXPECT_EQ(removed, expected);
}

TEST(CorpusCleaning, AThresholdRemovesEveryCandidateScoringAtLeastIt) {
  const Corpus c = small_corpus();
  Retriever retriever(c.index, c.encoder, c.encoder);
  CleaningOptions options;
  options.threshold = -1e6f;  // everything but the trusted passage
  options.alpha = 0.5f;
  const CleaningReport everything = find_contradicted(retriever, {"the cat sleeps"}, options);
  EXPECT_EQ(everything.removed.size(), 5u);
  options.threshold = 1e6f;
  EXPECT_TRUE(find_contradicted(retriever, {"the cat sleeps"}, options).removed.empty());
}

TEST(CorpusCleaning, AGivenMagnitudeGateScoresAsTheSameGatedSearchAndIsReported) {
  const Corpus c = small_corpus();
  Retriever retriever(c.index, c.encoder, c.encoder);
  CleaningOptions options;
  options.threshold = -1e6f;  // every candidate, so each one's score can be compared
  options.alpha = 1.0f;
  options.sparsity_scale = 4.0f;  // longer than any difference of unit rows: damps every pair
  const CleaningReport report = find_contradicted(retriever, {"the cat sleeps"}, options);
  EXPECT_EQ(report.scale.value, 4.0f);
  EXPECT_EQ(report.scale.source, AlphaChoice::Source::kGiven);
  SearchOptions search;
  search.scorer = Scorer::kSparsity;
  search.alpha = 1.0f;
  search.sparsity.scale = 4.0f;
  search.k = search.candidates = 6;
  EncodedQueries queries = retriever.encode_queries({"the cat sleeps"}, search);
  queries.exclude = {{"a"}};
  std::map<std::string, float> gated;
  const auto gated_hits = retriever.search_encoded(queries, search);
  for (const Hit& h : gated_hits[0]) gated[h.id] = h.sparsity;
  ASSERT_EQ(report.removed.size(), gated.size());
  for (const Removal& r : report.removed) EXPECT_FLOAT_EQ(r.sparsity, gated.at(r.id)) << r.id;
  search.sparsity.scale = 0.0f;  // no gate: every nonzero sparsity is larger
  std::size_t damped = 0;
  const auto plain_hits = retriever.search_encoded(queries, search);
  for (const Hit& h : plain_hits[0]) {
    if (h.sparsity > 1e-6f) {
      EXPECT_LT(gated.at(h.id), h.sparsity) << h.id;
      ++damped;
    }
  }
  EXPECT_GT(damped, 0u);

  options.sparsity_scale = -1.0f;
  EXPECT_THROW(validate(options), InvalidArgument);
}

TEST(CorpusCleaning, WritesTheKeptPassagesAndAReportToANewDirectoryOnly) {
  const Corpus c = small_corpus();
  Retriever retriever(c.index, c.encoder, c.encoder);
  CleaningOptions options;
  options.top = 1;
  options.alpha = 1.0f;
  const std::vector<std::string> trusted = {"the cat sleeps"};
  const CleaningReport report = find_contradicted(retriever, trusted, options);
  ASSERT_EQ(report.removed.size(), 1u);
  const std::string out = fresh_dir("cleaned");
  write_cleaned_corpus(out, c.documents, trusted, report);
  std::istringstream kept(read_file(out + "/corpus.jsonl"));
  std::size_t lines = 0;
  for (std::string line; std::getline(kept, line); ++lines) {
    EXPECT_NE(nlohmann::json::parse(line).at("_id"), report.removed[0].id);
  }
  EXPECT_EQ(lines, 5u);
  const auto removal = nlohmann::json::parse(read_file(out + "/report.jsonl"));
  EXPECT_EQ(removal.at("id"), report.removed[0].id);
  EXPECT_EQ(removal.at("trusted"), "the cat sleeps");
  // The directory now holds a corpus: a second cleaning into it is refused, and nothing changes.
  const std::string before = read_file(out + "/corpus.jsonl");
  EXPECT_THROW(write_cleaned_corpus(out, c.documents, trusted, report), InvalidArgument);
  EXPECT_EQ(read_file(out + "/corpus.jsonl"), before);
}

TEST(CorpusCleaning, RefusesWhatCannotClean) {
  const Corpus c = small_corpus();
  CleaningOptions options;
  EXPECT_THROW(find_contradicted(Retriever(c.index, c.encoder, c.encoder), {}, options), InvalidArgument);
  EXPECT_THROW(find_contradicted(Retriever(c.index, c.encoder, nullptr), {"x"}, options), InvalidArgument);
  options.top = 0;
  EXPECT_THROW(find_contradicted(Retriever(c.index, c.encoder, c.encoder), {"x"}, options), InvalidArgument);
}

}  // namespace
}  // namespace counterpoint::retrieval
