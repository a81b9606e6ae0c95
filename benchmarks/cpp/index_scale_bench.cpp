// Stage-1 scale benchmark: build time, memory per document, single-query latency and
// recall@k of the approximate kinds against exact flat search, on a synthetic clustered
// corpus of L2-normalised vectors (default 100k x 512; --docs 1000000 for the large run).
// Each row also gives the peak resident memory of the process while that kind was built and
// searched (the corpus and query matrices included), so the figure is per kind, not cumulative;
// the reset also leaves /usr/bin/time's "maximum resident set size" covering the last kind only.
//
//   index_scale_bench [--docs N] [--dim D] [--queries Q] [--k K] [--kinds flat,hnsw,ivf,ivfpq]
//                     [--hnsw-m M] [--ef-construction E] [--ef-search E] [--nlist L] [--nprobe P]
//                     [--pq-m M] [--pq-bits B] [--threads T]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench_support.h"
#include "counterpoint/core/matrix.h"
#include "counterpoint/index/document_index.h"

using namespace counterpoint;
using namespace counterpoint::index;

namespace {

struct Flags {
  std::size_t docs = 100000, dim = 512, queries = 50, k = 1000;
  std::string kinds = "flat,hnsw,ivf";
  int hnsw_m = 32, ef_construction = 80, ef_search = 1000, nlist = 0, nprobe = 0, threads = 1;
  int pq_m = 16, pq_bits = 8;
};

Flags parse(int argc, char** argv) {
  Flags f;
  bench_support::parse_flags("index_scale_bench", argc, argv, [&](const std::string& key, const std::string& value) {
    if (key == "--docs") f.docs = std::stoul(value);
    else if (key == "--dim") f.dim = std::stoul(value);
    else if (key == "--queries") f.queries = std::stoul(value);
    else if (key == "--k") f.k = std::stoul(value);
    else if (key == "--kinds") f.kinds = value;
    else if (key == "--hnsw-m") f.hnsw_m = std::stoi(value);
    else if (key == "--ef-construction") f.ef_construction = std::stoi(value);
    else if (key == "--ef-search") f.ef_search = std::stoi(value);
    else if (key == "--nlist") f.nlist = std::stoi(value);
    else if (key == "--nprobe") f.nprobe = std::stoi(value);
    else if (key == "--pq-m") f.pq_m = std::stoi(value);
    else if (key == "--pq-bits") f.pq_bits = std::stoi(value);
    else if (key == "--threads") f.threads = std::stoi(value);
    else return false;
    return true;
  });
  return f;
}

// Points scattered around 1000 random centres, so neighbourhoods have structure (uniform
// random vectors in 512 dimensions are all nearly orthogonal, which no real corpus is).
Matrix clustered(std::size_t n, std::size_t dim, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  std::mt19937 centre_gen(42);
  Matrix centres(1000, dim);
  for (float& v : centres.values()) v = normal(centre_gen);
  normalize_rows(centres);
  std::uniform_int_distribution<std::size_t> pick(0, centres.rows() - 1);
  Matrix m(n, dim);
  const float noise = 1.0f / std::sqrt(float(dim));
  for (std::size_t r = 0; r < n; ++r) {
    const float* c = centres.row(pick(gen));
    for (std::size_t d = 0; d < dim; ++d) m(r, d) = c[d] + noise * normal(gen);
  }
  normalize_rows(m);
  return m;
}

// Linux: writing 5 to clear_refs resets the peak (VmHWM) to the current resident size, so
// each kind's peak excludes the indexes built before it. Returns false where unsupported.
bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return bool(clear_refs);
}

// VmHWM from /proc/self/status in MiB, or -1 where it cannot be read.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  }
  return -1.0;
}

using bench_support::seconds_since;

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  omp_set_num_threads(f.threads);
  std::printf("corpus %zu x %zu (clustered, normalised), %zu queries, k %zu, %d thread(s)\n", f.docs, f.dim,
              f.queries, f.k, f.threads);
  const Matrix corpus = clustered(f.docs, f.dim, 1);
  const Matrix queries = clustered(f.queries, f.dim, 2);
  std::vector<std::string> ids(f.docs), texts(f.docs);
  for (std::size_t i = 0; i < f.docs; ++i) ids[i] = "doc" + std::to_string(i);

  std::vector<std::vector<Slot>> exact;
  std::printf("%-6s %10s %12s %14s %12s %14s  %s\n", "kind", "build_s", "bytes/doc", "ms/query", "recall@k",
              "peak_rss_MiB", "settings");
  std::stringstream kinds(f.kinds);
  for (std::string kind; std::getline(kinds, kind, ',');) {
    IndexOptions o;
    o.dim = f.dim;
    o.kind = kind;
    o.hnsw_m = f.hnsw_m;
    o.hnsw_ef_construction = f.ef_construction;
    o.ivf_nlist = f.nlist;
    o.pq_m = f.pq_m;
    o.pq_bits = f.pq_bits;
    o.build_bm25 = false;
    const bool peak_is_per_kind = reset_peak_rss();
    auto t0 = std::chrono::steady_clock::now();
    DocumentIndex index(o);
    index.add(texts, ids, corpus);
    const double build = seconds_since(t0);
    const double bytes_per_doc = double(index.memory_bytes()) / double(index.size());

    // Each kind gets only its own parameter (the index refuses another kind's).
    const std::string& own = index.options().kind;  // normalised: --kinds HNSW is hnsw
    SearchParams params{own == "hnsw" ? f.ef_search : 0, own == "ivf" || own == "ivfpq" ? f.nprobe : 0};
    std::vector<std::vector<Slot>> got(f.queries);
    t0 = std::chrono::steady_clock::now();
    for (std::size_t q = 0; q < f.queries; ++q) {
      const SearchResult r = index.search(MatrixView(queries.row(q), 1, f.dim), f.k, params);
      got[q] = r.slots;
    }
    const double ms = 1000.0 * seconds_since(t0) / double(f.queries);
    if (kind == "flat") exact = got;
    double recall = -1;
    if (!exact.empty()) {
      std::size_t hit = 0, total = 0;
      for (std::size_t q = 0; q < f.queries; ++q) {
        const std::set<Slot> want(exact[q].begin(), exact[q].end());
        for (Slot s : got[q]) hit += want.count(s);
        total += want.size();
      }
      recall = double(hit) / double(total);
    }
    std::string settings;
    if (kind == "hnsw") {
      settings = "M " + std::to_string(f.hnsw_m) + ", efConstruction " + std::to_string(f.ef_construction) +
                 ", efSearch " + std::to_string(std::max<int>(f.ef_search, int(f.k)));
    } else if (kind == "ivf" || kind == "ivfpq") {
      settings = "nlist " + (f.nlist > 0 ? std::to_string(f.nlist) : std::string("auto (sqrt n)")) + ", nprobe " +
                 (f.nprobe > 0 ? std::to_string(f.nprobe) : std::string("nlist/8"));
      if (kind == "ivfpq") settings += ", PQ " + std::to_string(f.pq_m) + " x " + std::to_string(f.pq_bits) + " bits";
    }
    if (!peak_is_per_kind) settings += " (peak RSS is the process peak so far)";
    std::printf("%-6s %10.1f %12.0f %14.2f %12.4f %14.0f  %s\n", kind.c_str(), build, bytes_per_doc, ms, recall,
                peak_rss_mib(), settings.c_str());
    std::fflush(stdout);
  }
  return 0;
}
