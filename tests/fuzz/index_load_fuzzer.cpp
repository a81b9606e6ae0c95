// Fuzzes DocumentIndex::load on a mutated saved index (packed as index_files.h describes).
// With bit 0 of the flags byte set, the harness reseals the mutated files first: it rewrites
// each section's byte length and SHA-256 in header.json and the header's own checksum, so the
// parsers behind the checksums (header fields, documents.bin, sparse.bin, tokens.bin) see
// the damage too. faiss.bin is never resealed: a damaged one must fail its checksum, because
// FAISS's own deserialiser is not hardened against crafted input (see docs/ROBUSTNESS.md).
// Damage must surface as CorruptFile (or FileNotFound); an index that loads must search.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/index/document_index.h"
#include "fuzz_support.h"
#include "index_files.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::set<std::string> kFileNames = {"header.json", "documents.bin", "sparse.bin", "tokens.bin", "faiss.bin"};

void reseal(const fs::path& dir) {
  json header;
  try {
    header = json::parse(counterpoint::read_file((dir / "header.json").string()));
  } catch (const std::exception&) {
    return;  // not JSON (or no header): nothing to reseal
  }
  if (!header.is_object()) return;
  auto sections = header.find("sections");
  if (sections != header.end() && sections->is_object()) {
    for (auto& [name, section] : sections->items()) {
      if (name == "faiss" || !section.is_object()) continue;
      auto file = section.find("file");
      if (file == section.end() || !file->is_string()) continue;
      const std::string file_name = file->get<std::string>();
      if (!kFileNames.count(file_name) || !fs::exists(dir / file_name)) continue;
      const std::string bytes = counterpoint::read_file((dir / file_name).string());
      section["bytes"] = bytes.size();
      section["sha256"] = counterpoint::sha256_hex(bytes);
    }
  }
  header.erase("checksum");
  std::string dumped;
  try {
    dumped = header.dump();
  } catch (const json::exception&) {
    return;
  }
  header["checksum"] = counterpoint::sha256_hex(dumped);
  counterpoint::write_file_atomic((dir / "header.json").string(), header.dump(2));
}

void exercise(const counterpoint::index::DocumentIndex& idx) {
  using namespace counterpoint;
  const auto& o = idx.options();
  if (o.dim > 4096) return;
  Matrix query(2, o.dim, 0.5f);
  const index::SearchResult r = idx.search(query, 3);
  for (const index::Slot s : r.slots) FUZZ_CHECK(s == -1 || idx.is_live(s));
  for (const index::Slot s : idx.live_slots()) {
    idx.id(s);
    idx.text(s);
    idx.dense_row(s);
    if (o.sparse_dim > 0 && o.sparse_dim <= 4096) {
      std::vector<float> row(o.sparse_dim);
      idx.gather_sparse(&s, 1, row.data());
    }
    if (o.store_token_embeddings) idx.token_embeddings(s);
  }
  if (idx.has_bm25()) idx.search_bm25("cats attack", 3);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const fs::path dir = counterpoint::fuzz::scratch_path("index");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto files = counterpoint::fuzz::unpack_files(std::string(reinterpret_cast<const char*>(data), size));
  for (const auto& [name, bytes] : files) {
    if (kFileNames.count(name)) counterpoint::fuzz::write_bytes((dir / name).string(), bytes.data(), bytes.size());
  }
  if (data[0] & 1) reseal(dir);
  try {
    exercise(counterpoint::index::DocumentIndex::load(dir.string()));
  } catch (const counterpoint::CorruptFile&) {
  } catch (const counterpoint::FileNotFound&) {
  }
  return 0;
}
