// Test support for the index layer: reproducible random embeddings, and saved headers rewritten
// as another writer would have written them.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "counterpoint/core/files.h"
#include "counterpoint/core/matrix.h"
#include "counterpoint/index/document_index.h"

namespace counterpoint::index::test_support {

// `rows` L2-normalised Gaussian rows of width `cols`, the same for the same seed.
inline Matrix random_rows(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  Matrix m(rows, cols);
  for (float& v : m.values()) v = normal(gen);
  normalize_rows(m);
  return m;
}

// Rewrites header.json of the index saved in `dir` through `edit`, with a checksum that matches
// again: an older version's header, or a damaged one that its checksum does not catch.
inline void rewrite_header(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json header = nlohmann::json::parse(read_file(join_path(dir, "header.json")));
  edit(header);
  header.erase("checksum");
  header["checksum"] = sha256_hex(header.dump());
  write_file_atomic(join_path(dir, "header.json"), header.dump(2));
}

// The per-call parameters `kind` reads (efSearch for hnsw, nprobe for the IVF kinds; the index
// refuses another kind's), for tests that search every kind alike.
inline SearchParams params_for(const std::string& kind, int ef_search, int nprobe) {
  SearchParams params;
  if (kind == "hnsw") params.ef_search = ef_search;
  if (kind == "ivf" || kind == "ivfpq") params.nprobe = nprobe;
  return params;
}

}  // namespace counterpoint::index::test_support
