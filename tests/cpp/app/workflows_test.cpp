// The workflows every face calls: options are checked before any model is loaded or any text
// encoded, and a whole run on a tiny BEIR set gives the figures the evaluation layer gives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "counterpoint/app/beir_run.h"
#include "counterpoint/app/corpus_index.h"
#include "counterpoint/app/stance_run.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/retrieval/stance.h"
#include "message_of.h"

using namespace counterpoint;
using namespace counterpoint::app;
using counterpoint::test_support::message_of;

namespace {

const std::string kData = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/data/beir_mini";
const std::string kTinyModel = std::string(COUNTERPOINT_TEST_DATA_DIR) + "/training/tiny-model";

// A model directory whose manifest cannot be read: loading it throws CorruptFile, so a test that
// gets another error knows nothing was loaded.
std::string unloadable_model() {
  const auto dir = std::filesystem::temp_directory_path() / "counterpoint_unloadable_model";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "manifest.json") << "{ not json";
  return dir.string();
}

BeirRunOptions run_options() {
  BeirRunOptions o;
  o.dataset = kData;
  o.qrels = kData + "/qrels/dev.tsv";
  o.model = unloadable_model();
  return o;
}


}  // namespace

TEST(BeirRun, TheUnloadableModelReallyFailsToLoad) {
  EXPECT_THROW(run_beir(run_options()), CorruptFile);
}

TEST(BeirRun, ASparsityScorerWithoutEsFailsBeforeAnyModelIsLoaded) {
  auto o = run_options();
  o.search.scorer = retrieval::Scorer::kSparsity;
  EXPECT_NE(message_of([&] { run_beir(o); }).find("needs a sparse-aware encoder Es (sparse_model)"), std::string::npos);
}

TEST(BeirRun, AnUnknownMetricFailsBeforeAnyModelIsLoaded) {
  auto o = run_options();
  o.metrics = {"ndcg@10", "ndgc@10"};
  EXPECT_NE(message_of([&] { run_beir(o); }).find("ndgc@10"), std::string::npos);
}

TEST(BeirRun, TuningWithoutASparsityScorerAndTooFewCandidatesFailFirst) {
  auto o = run_options();
  o.tune_alpha = eval::AlphaSearch::Kind::kInterval;
  // In the option's own name, which is also the Python keyword; the CLI says --tune-alpha.
  EXPECT_EQ(message_of([&] { run_beir(o); }), "tune_alpha needs a sparsity scorer (hoyer, l2l1 or kappa4)");
  o = run_options();
  o.k = 50;
  o.search.candidates = 20;
  EXPECT_NE(message_of([&] { run_beir(o); }).find("candidates 20 is below"), std::string::npos);
}

// Stage 1 fetches every hit a run keeps: candidates left at their default follow a deeper k (given,
// or the depth the metrics need), as in every search; a count set below it is refused.
TEST(BeirRun, DefaultCandidatesFollowADeeperRunAndSetOnesBelowItAreRefused) {
  auto o = run_options();
  o.k = 1500;
  EXPECT_THROW(run_beir(o), CorruptFile);  // past every check, to loading E
  o = run_options();
  o.metrics = {"recall@2000"};
  EXPECT_THROW(run_beir(o), CorruptFile);
  o.search.candidates = 1500;
  EXPECT_EQ(message_of([&] { run_beir(o); }),
            "candidates 1500 is below the 2000 hits per query this run keeps; raise candidates to 2000 or more");
}

// `run --dataset corpus/corpus.jsonl` used to report corpus/corpus.jsonl/corpus.jsonl missing.
TEST(BeirRun, ACorpusFileGivenAsTheDatasetIsNamedAsAFile) {
  auto o = run_options();
  o.dataset = kData + "/corpus.jsonl";
  EXPECT_EQ(message_of([&] { run_beir(o); }),
            o.dataset + " is a file; a BEIR dataset is a folder of corpus.jsonl, queries.jsonl and qrels/<split>.tsv (a "
                        "corpus file alone is read as a corpus: load_corpus, index build --corpus)");
}

TEST(BeirRun, AnOutputIntoAMissingFolderFailsFirst) {
  auto o = run_options();
  o.out = "/nonexistent-folder-of-counterpoint/run.trec";
  EXPECT_THROW(run_beir(o), FileNotFound);
}

// The workflows serve the CLI and Python alike: a refusal names the option's field, which is the
// Python keyword (tune_alpha, index_cache, k), never a flag; the CLI alone says --tune-alpha, -k.
TEST(BeirRun, RefusalsNameTheOptionsFieldNeverAFlag) {
  auto o = run_options();
  o.dataset.clear();
  EXPECT_EQ(message_of([&] { run_beir(o); }), "dataset is required");
  o = run_options();
  o.qrels = kData + "/qrels/missing.tsv";
  EXPECT_EQ(message_of<FileNotFound>([&] { run_beir(o); }), "qrels not found: " + o.qrels);
  o = run_options();
  o.out = o.qrels;
  EXPECT_EQ(message_of([&] { run_beir(o); }), "out " + o.qrels + " is the input qrels " + o.qrels +
                                                  "; writing it would destroy the input: choose another path");
  o = run_options();
  o.k = 5;
  o.metrics = {"ndcg@10"};
  EXPECT_EQ(message_of([&] { run_beir(o); }),
            "k 5 is below the 10 hits per query that metrics ndcg@10 need; raise k or drop the deeper metrics");
  o = run_options();
  o.search.dense_params.nprobe = 4;
  EXPECT_EQ(message_of([&] { run_beir(o); }),
            "nprobe applies to an hnsw or ivf index, and run builds a flat one: give index_cache an index built by "
            "`index build --kind hnsw|ivf` from this corpus");
  o = run_options();
  o.search.scorer = retrieval::Scorer::kSparsity;
  o.sparse_model = kTinyModel;
  o.search.alpha = 1.0f;
  o.tune_alpha = eval::AlphaSearch::Kind::kGrid;
  EXPECT_EQ(message_of([&] { run_beir(o); }),
            "tune_alpha chooses alpha on the qrels, and alpha gives one: keep one of them");
}

TEST(BeirRun, ARunOnATinySetReportsEveryMetricAndTheDepthTheyNeed) {
  BeirRunOptions o;
  o.dataset = kData;
  o.qrels = kData + "/qrels/dev.tsv";
  o.model = kTinyModel;
  o.metrics = {"ndcg@10", "recall@3"};
  const auto report = run_beir(o);
  EXPECT_GE(report.queries, 1u);
  EXPECT_EQ(report.k, 10u);  // ndcg@10's cut-off: the query's own id is dropped before the 10 are kept
  EXPECT_EQ(report.scoring, "scorer cosine");
  ASSERT_EQ(report.metrics.size(), 2u);
  for (const auto& [name, value] : report.metrics) {
    EXPECT_GE(value, 0.0) << name;
    EXPECT_LE(value, 1.0) << name;
  }
}

// `counterpoint stance` reads each query's stance from its instruction, so every template must read as its own.
TEST(StanceRun, EveryInstructionTemplateReadsAsItsStanceAndLeavesTheTopic) {
  for (const auto* templates : {&training::training_stance_templates(), &training::held_out_stance_templates()}) {
    for (const auto& t : *templates) {
      for (const std::string stance : {"support", "attack"}) {
        const auto reading = retrieval::read_stance(training::stance_query(t, stance, "We should ban boxing"));
        EXPECT_EQ(retrieval::to_string(reading.stance), stance) << t.support << " / " << t.attack;
        EXPECT_TRUE(reading.from_instruction);
        EXPECT_EQ(reading.claim, "We should ban boxing");
      }
    }
  }
}

TEST(StanceRun, TemplateNamesParseAndAMissingMetadataFileIsNamed) {
  EXPECT_EQ(parse_stance_templates("training"), StanceTemplates::kTraining);
  EXPECT_THROW(parse_stance_templates("heldout"), InvalidArgument);
  StanceRunOptions o;
  o.dataset = kData;  // no metadata.jsonl
  o.qrels = kData + "/qrels/dev.tsv";
  o.model = unloadable_model();
  EXPECT_THROW(run_stance(o), FileNotFound);
}

// P@R of a query with R positives reads its top R hits: a stage 1 fetching fewer would score the
// ranks it never fetched as misses, so the run stops before any model loads.
TEST(StanceRun, CandidatesBelowAQuerysPositivesAreRefusedBeforeAnyModelIsLoaded) {
  const auto dir = std::filesystem::temp_directory_path() / "counterpoint_stance_depth";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "qrels");
  std::ofstream corpus(dir / "corpus.jsonl"), metadata(dir / "metadata.jsonl");
  for (int i = 0; i < 14; ++i) {
    const std::string id = "c" + std::to_string(i), stance = i < 12 ? "pro" : "con";
    corpus << R"({"_id": ")" << id << R"(", "title": "", "text": "claim )" << i << "\"}\n";
    metadata << R"({"_id": ")" << id << R"(", "topic_id": "1", "stance": ")" << stance << "\"}\n";
  }
  corpus.close();
  metadata.close();
  std::ofstream(dir / "queries.jsonl") << R"({"_id": "t1-support", "text": "We should ban boxing", )"
                                       << R"("topic_id": "1", "stance": "support"})" << "\n";
  std::ofstream(dir / "qrels" / "test.tsv") << "query-id\tcorpus-id\tscore\nt1-support\tc0\t1\n";
  StanceRunOptions o;
  o.dataset = dir.string();
  o.qrels = (dir / "qrels" / "test.tsv").string();
  o.model = unloadable_model();
  o.search.candidates = 8;
  EXPECT_EQ(message_of([&] { run_stance(o); }),
            "candidates 8 is below the 12 hits P@R reads for query t1-support (its positives); raise candidates "
            "to 12 or more");
  o.search.candidates = 12;
  EXPECT_THROW(run_stance(o), CorruptFile);  // enough candidates: the run goes on to load E
  std::filesystem::remove_all(dir);
}

TEST(BeirRun, AnIndexCacheOfAnotherCorpusIsRefusedNotScoredAsZero) {
  const auto cache = std::filesystem::temp_directory_path() / "counterpoint_other_corpus_index";
  std::filesystem::remove_all(cache);
  BeirRunOptions o;
  o.dataset = kData;
  o.qrels = kData + "/qrels/dev.tsv";
  o.model = kTinyModel;
  o.feature_cache = "";
  o.index_cache = cache.string();
  run_beir(o);  // builds and saves the cache
  run_beir(o);  // reuses it
  const auto other = std::filesystem::temp_directory_path() / "counterpoint_other_corpus";
  std::filesystem::remove_all(other);
  std::filesystem::create_directories(other);
  std::ofstream(other / "corpus.jsonl") << R"({"_id": "x1", "text": "something else entirely"})" << "\n";
  std::ofstream(other / "queries.jsonl") << R"({"_id": "q1", "text": "a query"})" << "\n";
  std::ofstream(other / "qrels.tsv") << "query-id\tcorpus-id\tscore\nq1\tx1\t1\n";
  o.dataset = other.string();
  o.qrels = (other / "qrels.tsv").string();
  EXPECT_NE(message_of([&] { run_beir(o); }).find("is an index of another corpus"), std::string::npos);
  std::filesystem::remove_all(cache);
  std::filesystem::remove_all(other);
}

TEST(IndexBuild, SettingsThatCannotHoldAreRefusedByFieldBeforeAnyEncoding) {
  IndexBuild build;
  build.batch_size = 0;
  EXPECT_EQ(message_of([&] { validate(build, true); }), "batch_size must be >= 1 (documents encoded per step)");
  build = IndexBuild{};
  build.fp16 = true;
  EXPECT_EQ(message_of([&] { validate(build, false); }), "fp16 stores Es rows as float16: it needs a sparse_model (Es)");
  EXPECT_NO_THROW(validate(build, true));
  build = IndexBuild{};
  build.stem = true;
  build.bm25 = false;
  EXPECT_NE(message_of([&] { validate(build, false); }).find("stem applies to BM25 terms"), std::string::npos);
}

TEST(IndexBuild, TextsAndIdsMustPairUpAndAnIndexHoldsAtLeastOneDocument) {
  const auto encoder = load_model(kTinyModel, 1);
  EXPECT_EQ(message_of([&] { build_index({"one", "two"}, {"1"}, *encoder, nullptr); }),
            "texts and ids must have the same length: 2 texts, 1 ids");
  EXPECT_EQ(message_of([&] { build_index(std::vector<std::string>{}, {}, *encoder, nullptr); }),
            "texts is empty: an index needs at least one document");
  IndexBuild hnsx;
  hnsx.kind = "hnsx";
  EXPECT_NE(message_of([&] { build_index({"one"}, {"1"}, *encoder, nullptr, hnsx); }).find("did you mean 'hnsw'"),
            std::string::npos);
}

TEST(IndexBuild, ACorpusIsIndexedByItsEncodingTextsUnderItsIdsAsTheBuildSays) {
  const auto encoder = load_model(kTinyModel, 1);
  IndexBuild build;
  build.tokens = true;
  build.bm25 = false;
  build.batch_size = 1;
  const auto index = build_index({{"d1", "A title", "some text"}, {"d2", "", "other text"}}, *encoder, nullptr, build);
  ASSERT_EQ(index->size(), 2u);
  EXPECT_EQ(index->text(*index->slot_of("d1")), "A title some text");
  EXPECT_TRUE(index->options().store_token_embeddings);
  EXPECT_FALSE(index->options().build_bm25);
  const auto passages = passages_of(*index);
  ASSERT_EQ(passages.size(), 2u);
  EXPECT_EQ(passages[1].id, "d2");
  EXPECT_EQ(passages[1].text, "other text");
}
