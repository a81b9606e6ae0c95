// Cost of stage 2 (SparseCL paper Table 11): scoring 100 candidates of a query by
// cos(E) + alpha * Hoyer(Es) on stored embeddings, against scoring the same 100 (query,
// candidate) pairs with a cross-encoder of the same size, i.e. one forward pass of the same
// network per pair over the joined texts (the classification head of a real cross-encoder is one
// linear layer, negligible next to the transformer). Texts are real queries and documents of a
// BEIR dataset; candidates are drawn with a fixed seed, since the cost depends on their lengths,
// not on their relevance.
//
//   scoring_cost_bench --dataset DIR [--model DIR] [--sparse-model DIR] [--queries 20]
//                      [--candidates 100] [--threads 2] [--batch-size 32] [--seed 42]
//
// Prints per-query medians (ms): the sparse rerank on stored rows, the query encodings it needs
// (E and Es), and the cross-encoder pass over the pairs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_support.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/scoring/pooled.h"

using namespace counterpoint;

namespace {

struct Flags {
  std::string dataset, model, sparse_model;
  std::size_t queries = 20, candidates = 100, batch_size = 32;
  int threads = 2;
  unsigned seed = 42;
};

const char* const kUsageHint = "(see the header of benchmarks/cpp/scoring_cost_bench.cpp)";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "scoring_cost_bench: %s\n%s\n", message.c_str(), kUsageHint);
  std::exit(2);
}

Flags parse(int argc, char** argv) {
  Flags f;
  const char* models = std::getenv("COUNTERPOINT_MODELS");
  if (models) f.model = std::string(models) + "/use-lite-en";
  bench_support::parse_flags("scoring_cost_bench", argc, argv, [&](const std::string& key, const std::string& value) {
    if (key == "--dataset") f.dataset = value;
    else if (key == "--model") f.model = value;
    else if (key == "--sparse-model") f.sparse_model = value;
    else if (key == "--queries") f.queries = std::stoul(value);
    else if (key == "--candidates") f.candidates = std::stoul(value);
    else if (key == "--batch-size") f.batch_size = std::stoul(value);
    else if (key == "--threads") f.threads = std::stoi(value);
    else if (key == "--seed") f.seed = unsigned(std::stoul(value));
    else return false;
    return true;
  }, kUsageHint);
  if (f.dataset.empty()) usage_error("--dataset DIR is required");
  if (f.model.empty()) usage_error("--model DIR is required when COUNTERPOINT_MODELS is not set");
  if (f.sparse_model.empty()) f.sparse_model = f.model;
  if (f.queries == 0 || f.candidates == 0 || f.batch_size == 0) usage_error("counts must be positive");
  return f;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) try {
  const Flags f = parse(argc, argv);
  const data::BeirDataset dataset = data::load_beir(f.dataset);
  if (dataset.corpus.size() < f.candidates) usage_error("the corpus has fewer documents than --candidates");
  if (dataset.queries.empty()) usage_error("the dataset has no queries");
  const EncoderConfig config{f.threads};
  const auto dense = Encoder::load(f.model, config);
  const auto sparse = Encoder::load(f.sparse_model, config);
  EncodeOptions documents;
  documents.batch_size = f.batch_size;
  EncodeOptions queries = documents;
  queries.role = TextRole::kQuery;

  std::mt19937 rng(f.seed);
  std::vector<std::size_t> order(dataset.corpus.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;

  const std::size_t n_queries = std::min(f.queries, dataset.queries.size());
  std::printf("dataset %s: %zu queries x %zu candidates, E %s, Es %s, %d thread(s), batch %zu\n",
              f.dataset.c_str(), n_queries, f.candidates, dense->manifest().name.c_str(),
              sparse->manifest().name.c_str(), f.threads, f.batch_size);
  std::vector<double> rerank_ms, query_encode_ms, cross_ms;
  std::size_t cross_truncated = 0;
  for (std::size_t q = 0; q < n_queries; ++q) {
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::string> candidate_texts, pair_texts;
    for (std::size_t c = 0; c < f.candidates; ++c) {
      candidate_texts.push_back(data::encoding_text(dataset.corpus[order[c]]));
      pair_texts.push_back(dataset.queries[q].text + " " + candidate_texts.back());
    }
    // The stored side of the bi-encoder: computed at indexing time, not part of a query's cost.
    const Matrix stored_dense = dense->encode(candidate_texts, documents);
    const Matrix stored_sparse = sparse->encode(candidate_texts, documents);

    auto t0 = std::chrono::steady_clock::now();
    const Matrix query_dense = dense->encode({dataset.queries[q].text}, queries);
    const Matrix query_sparse = sparse->encode({dataset.queries[q].text}, queries);
    query_encode_ms.push_back(ms_since(t0));

    t0 = std::chrono::steady_clock::now();
    const auto scores = scoring::combined_scores(query_dense, stored_dense, query_sparse, stored_sparse, 1.0f,
                                                 scoring::SparsityOptions{});
    rerank_ms.push_back(ms_since(t0));
    if (scores.final.size() != f.candidates) throw Error("rerank returned the wrong number of scores");

    EncodeReport report;
    t0 = std::chrono::steady_clock::now();
    const Matrix joint = dense->encode(pair_texts, documents, &report);
    cross_ms.push_back(ms_since(t0));
    cross_truncated += report.truncated;
    if (joint.rows() != f.candidates) throw Error("cross-encoder pass returned the wrong number of rows");
    std::fprintf(stderr, "\rquery %zu/%zu", q + 1, n_queries);
  }
  std::fprintf(stderr, "\n");
  const double rerank = median(rerank_ms), encode = median(query_encode_ms), cross = median(cross_ms);
  std::printf("%-58s %12s\n", "per query, median over queries", "ms");
  std::printf("%-58s %12.4f\n", "cos + Hoyer over stored rows (stage 2 alone)", rerank);
  std::printf("%-58s %12.2f\n", "query encodings E + Es", encode);
  std::printf("%-58s %12.2f\n", "bi-encoder total (encodings + rerank)", encode + rerank);
  std::printf("%-58s %12.2f\n", "cross-encoder: same network over the joined pairs", cross);
  std::printf("cross-encoder / rerank alone: %.0fx; cross-encoder / bi-encoder total: %.1fx\n", cross / rerank,
              cross / (encode + rerank));
  std::printf("joined pairs cut to the model's max_length (%zu tokens): %zu of %zu\n",
              dense->manifest().max_length, cross_truncated, n_queries * f.candidates);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "scoring_cost_bench: %s\n", e.what());
  return 1;
}
