// What finding stage-1 candidates once saves when alpha is tuned: the same sweep of alphas over
// cos + alpha * Hoyer(Es(q) - Es(p)), run as one full search per alpha (Retriever::search_encoded)
// and as one Retriever::find_candidates followed by one Retriever::rescore per alpha, on a
// synthetic corpus of L2-normalised rows (default 100k x 384, Es rows 384 wide). Prints the
// seconds of each, their ratio, and whether every alpha's hits agree (ids and scores).
//
//   alpha_tuning_bench [--docs N] [--dim D] [--queries Q] [--alphas A] [--candidates K]
//                      [--kind flat|hnsw|ivf] [--threads T]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.h"
#include "counterpoint/core/matrix.h"
#include "counterpoint/index/document_index.h"
#include "counterpoint/retrieval/retriever.h"

using namespace counterpoint;
using bench_support::seconds_since;
using bench_support::random_rows;

namespace {

struct Flags {
  std::size_t docs = 100000, dim = 384, queries = 200, alphas = 41, candidates = 100;
  std::string kind = "flat";
  int threads = 2;
};

Flags parse(int argc, char** argv) {
  Flags f;
  bench_support::parse_flags("alpha_tuning_bench", argc, argv, [&](const std::string& key, const std::string& value) {
    if (key == "--docs") f.docs = std::stoul(value);
    else if (key == "--dim") f.dim = std::stoul(value);
    else if (key == "--queries") f.queries = std::stoul(value);
    else if (key == "--alphas") f.alphas = std::stoul(value);
    else if (key == "--candidates") f.candidates = std::stoul(value);
    else if (key == "--kind") f.kind = value;
    else if (key == "--threads") f.threads = std::stoi(value);
    else return false;
    return true;
  });
  if (f.docs == 0 || f.dim == 0 || f.queries == 0 || f.alphas == 0 || f.candidates == 0 || f.threads < 1) {
    std::fprintf(stderr, "--docs, --dim, --queries, --alphas, --candidates and --threads must be positive\n");
    std::exit(2);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  omp_set_num_threads(f.threads);
  index::IndexOptions options;
  options.dim = f.dim;
  options.sparse_dim = f.dim;
  options.kind = f.kind;
  auto documents = std::make_shared<index::DocumentIndex>(options);
  std::vector<std::string> ids(f.docs), texts(f.docs);
  for (std::size_t i = 0; i < f.docs; ++i) ids[i] = texts[i] = "d" + std::to_string(i);
  documents->add(texts, ids, random_rows(f.docs, f.dim, 1), random_rows(f.docs, f.dim, 2));
  retrieval::Retriever retriever(documents, nullptr);

  retrieval::EncodedQueries queries;
  queries.dense = random_rows(f.queries, f.dim, 3);
  queries.sparse = random_rows(f.queries, f.dim, 4);
  retrieval::SearchOptions search;
  search.scorer = retrieval::Scorer::kSparsity;
  search.candidates = f.candidates;
  search.k = std::min<std::size_t>(10, f.candidates);
  std::vector<float> alphas;
  for (std::size_t i = 0; i < f.alphas; ++i) alphas.push_back(10.0f * float(i) / float(f.alphas));

  std::vector<std::vector<std::vector<retrieval::Hit>>> searched, rescored;
  auto start = std::chrono::steady_clock::now();
  for (float alpha : alphas) {
    search.alpha = alpha;
    searched.push_back(retriever.search_encoded(queries, search));
  }
  const double per_alpha_search = seconds_since(start);
  start = std::chrono::steady_clock::now();
  const auto candidates = retriever.find_candidates(queries, search);
  for (float alpha : alphas) {
    search.alpha = alpha;
    rescored.push_back(retriever.rescore(queries, candidates, search));
  }
  const double found_once = seconds_since(start);

  std::size_t differing = 0;
  for (std::size_t a = 0; a < alphas.size(); ++a) {
    for (std::size_t q = 0; q < f.queries; ++q) {
      const auto &x = searched[a][q], &y = rescored[a][q];
      bool same = x.size() == y.size();
      for (std::size_t i = 0; same && i < x.size(); ++i) same = x[i].id == y[i].id && x[i].score == y[i].score;
      differing += !same;
    }
  }
  std::printf("corpus %zu x %zu (%s), %zu queries, K %zu, %zu alphas, %d threads\n", f.docs, f.dim, f.kind.c_str(),
              f.queries, f.candidates, f.alphas, f.threads);
  std::printf("search per alpha        %8.3f s\n", per_alpha_search);
  std::printf("candidates once+rescore %8.3f s\n", found_once);
  std::printf("ratio                   %8.1f x\n", per_alpha_search / found_once);
  std::printf("hit lists that differ   %8zu of %zu\n", differing, alphas.size() * f.queries);
  return differing == 0 ? 0 : 1;
}
