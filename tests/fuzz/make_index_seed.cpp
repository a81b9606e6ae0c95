// Writes the seed input of the index_load fuzzer: a small saved index (flat, Es in float16,
// token embeddings, BM25, one removed slot) packed as index_files.h describes.
// Usage: make_index_seed OUTPUT_FILE [FLAGS_BYTE]
#include <filesystem>
#include <iostream>
#include <string>
#include <unistd.h>

#include "counterpoint/core/files.h"
#include "counterpoint/index/document_index.h"
#include "index_files.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: make_index_seed OUTPUT_FILE [FLAGS_BYTE]\n";
    return 2;
  }
  namespace fs = std::filesystem;
  using namespace counterpoint;
  index::IndexOptions o;
  o.dim = 4;
  o.sparse_dim = 3;
  o.sparse_storage = index::IndexOptions::SparseStorage::kFloat16;
  o.store_token_embeddings = true;
  o.token_dim = 2;
  index::DocumentIndex idx(o);
  Matrix dense(3, 4, std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f});
  Matrix sparse(3, 3, std::vector<float>{1, 2, 3, 0, 1, 0, -1, 0.5f, 0});
  std::vector<Matrix> tokens = {Matrix(1, 2, 0.5f), Matrix(2, 2, 0.25f), Matrix(3, 2, -1.0f)};
  idx.add({"Cats attack dogs.", "Dogs support cats", "Ünïcode 中文 😀"}, {"d0", "d1", "d2"}, dense, sparse, tokens);
  idx.remove({"d1"});
  const fs::path dir = fs::temp_directory_path() / ("counterpoint_index_seed_" + std::to_string(::getpid()));
  idx.save(dir.string());
  std::string packed(1, static_cast<char>(argc > 2 ? std::stoi(argv[2]) : 0));
  for (const char* name : {"header.json", "documents.bin", "sparse.bin", "tokens.bin", "faiss.bin"}) {
    packed += fuzz::pack_file(name, read_file((dir / name).string()));
  }
  fs::remove_all(dir);
  write_file_atomic(argv[1], packed);
  return 0;
}
