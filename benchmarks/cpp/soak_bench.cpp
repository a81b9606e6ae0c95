// Soak benchmark: an ArguAna-sized index (8,565 documents, E and Es of width 512, random
// L2-normalised rows) searched from several threads at once with stage-2 rescoring by
// cosine + alpha * Hoyer sparsity over K = 100 candidates, for many searches. It prints the
// throughput of every tenth of the run and the resident set size at start and end, so that a
// slowdown or a leak over a long run shows up.
//
//   soak_bench [--searches N] [--threads T] [--docs D] [--dim W] [--k k] [--candidates K]
//              [--alpha A] [--seed S]
// Defaults: 1,000,000 searches, 4 threads, 8565 docs, 512 wide, k 10, K 100, alpha 1.
#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "counterpoint/core/matrix.h"
#include "counterpoint/index/document_index.h"
#include "counterpoint/retrieval/retriever.h"

using namespace counterpoint;

namespace {

struct Flags {
  std::size_t searches = 1000000, docs = 8565, dim = 512, k = 10, candidates = 100;
  int threads = 4;
  float alpha = 1.0f;
  unsigned seed = 7;
};

Flags parse(int argc, char** argv) {
  Flags f;
  bench_support::parse_flags("soak_bench", argc, argv, [&](const std::string& key, const std::string& value) {
    if (key == "--searches") f.searches = std::stoul(value);
    else if (key == "--threads") f.threads = std::stoi(value);
    else if (key == "--docs") f.docs = std::stoul(value);
    else if (key == "--dim") f.dim = std::stoul(value);
    else if (key == "--k") f.k = std::stoul(value);
    else if (key == "--candidates") f.candidates = std::stoul(value);
    else if (key == "--alpha") f.alpha = std::stof(value);
    else if (key == "--seed") f.seed = unsigned(std::stoul(value));
    else return false;
    return true;
  });
  if (f.searches == 0 || f.threads < 1) {
    std::fprintf(stderr, "soak_bench: --searches and --threads must be >= 1\n");
    std::exit(2);
  }
  return f;
}

Matrix random_unit_rows(std::size_t rows, std::size_t cols, std::mt19937& gen) {
  std::normal_distribution<float> normal;
  Matrix m(rows, cols);
  for (float& v : m.values()) v = normal(gen);
  normalize_rows(m);
  return m;
}

double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size_pages = 0, resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return double(resident_pages) * double(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  std::mt19937 gen(f.seed);
  index::IndexOptions options;
  options.dim = f.dim;
  options.sparse_dim = f.dim;
  options.build_bm25 = false;
  auto idx = std::make_shared<index::DocumentIndex>(options);
  {
    std::vector<std::string> ids(f.docs), texts(f.docs);
    for (std::size_t i = 0; i < f.docs; ++i) ids[i] = "doc" + std::to_string(i);
    const Matrix dense = random_unit_rows(f.docs, f.dim, gen);
    const Matrix sparse = random_unit_rows(f.docs, f.dim, gen);
    idx->add(texts, ids, dense, sparse);
  }
  const retrieval::Retriever retriever(idx, nullptr);
  constexpr std::size_t kQueryPool = 1024;
  std::vector<retrieval::EncodedQueries> pool(kQueryPool);
  for (auto& q : pool) {
    q.texts = {""};
    q.dense = random_unit_rows(1, f.dim, gen);
    q.sparse = random_unit_rows(1, f.dim, gen);
  }
  retrieval::SearchOptions search;
  search.k = f.k;
  search.candidates = f.candidates;
  retrieval::set_scorer(search, "hoyer");
  search.alpha = f.alpha;

  const double rss_start = rss_mib();
  std::printf("soak: %zu docs x %zu (E and Es), %d threads, cos + %.2f * hoyer, k %zu, K %zu, %zu searches\n",
              f.docs, f.dim, f.threads, double(f.alpha), f.k, f.candidates, f.searches);
  std::printf("RSS at start: %.1f MiB\n", rss_start);
  std::printf("%8s %12s %14s %14s %10s\n", "done", "elapsed_s", "interval_qps", "overall_qps", "rss_mib");
  std::fflush(stdout);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::atomic<std::size_t> next{0}, done{0};
  std::atomic<std::size_t> hits_returned{0};
  std::mutex report_mutex;
  auto last_time = start;
  std::size_t last_done = 0, next_report = 1;
  const auto report = [&](std::size_t finished) {
    std::lock_guard<std::mutex> lock(report_mutex);
    while (next_report <= 10 && finished >= f.searches * next_report / 10) {
      const auto now = Clock::now();
      const double elapsed = std::chrono::duration<double>(now - start).count();
      const double interval = std::chrono::duration<double>(now - last_time).count();
      std::printf("%7zu%% %12.2f %14.0f %14.0f %10.1f\n", next_report * 10, elapsed,
                  double(finished - last_done) / interval, double(finished) / elapsed, rss_mib());
      std::fflush(stdout);
      last_time = now;
      last_done = finished;
      ++next_report;
    }
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < f.threads; ++t) {
    workers.emplace_back([&] {
      omp_set_num_threads(1);  // parallelism comes from the worker threads
      std::size_t local_hits = 0;
      for (std::size_t i = next++; i < f.searches; i = next++) {
        local_hits += retriever.search_encoded(pool[i % kQueryPool], search).front().size();
        const std::size_t finished = ++done;
        if (finished * 10 % f.searches < 10) report(finished);
      }
      hits_returned += local_hits;
    });
  }
  for (auto& w : workers) w.join();
  report(f.searches);
  const double total = std::chrono::duration<double>(Clock::now() - start).count();
  const double rss_end = rss_mib();
  std::printf("searches %zu in %.2f s: %.0f searches/s; hits per search %.2f\n", f.searches, total,
              double(f.searches) / total, double(hits_returned) / double(f.searches));
  std::printf("RSS at end: %.1f MiB (%+.1f MiB since start)\n", rss_end, rss_end - rss_start);
  return hits_returned == f.searches * f.k ? 0 : 1;
}
