// Fuzzes the JSON Lines readers (BEIR corpus and queries, plain JSONL corpora) on arbitrary
// file content. Input: byte 0 picks the reader, the rest is the file. Damaged input must throw
// CorruptFile (a counterpoint::Error); documents that load must have non-empty, unique ids, and
// a file holding a NUL byte never loads (nlohmann's parser would end a line at it and hide the
// rest).
#include <cstdint>
#include <set>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/corpus_files.h"
#include "counterpoint/data/jsonl.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string path = counterpoint::fuzz::scratch_path("corpus.jsonl");
  const bool has_nul = std::string(reinterpret_cast<const char*>(data + 1), size - 1).find('\0') != std::string::npos;
  counterpoint::fuzz::write_bytes(path, reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    std::vector<counterpoint::data::Document> docs;
    switch (data[0] % 4) {
      case 0: docs = counterpoint::data::load_corpus(path); break;
      case 1: docs = counterpoint::data::load_jsonl_documents(path); break;
      case 2: {
        std::set<std::string> ids;
        for (const auto& q : counterpoint::data::load_queries(path)) {
          FUZZ_CHECK(q.extra.is_object() && !q.extra.contains("_id"));
          FUZZ_CHECK(ids.insert(q.id).second);
        }
        break;
      }
      default: counterpoint::data::read_jsonl(path); break;
    }
    FUZZ_CHECK(!has_nul);
    std::set<std::string> ids;
    for (const auto& d : docs) {
      FUZZ_CHECK(!d.id.empty());
      FUZZ_CHECK(ids.insert(d.id).second);
      counterpoint::data::encoding_text(d);
    }
  } catch (const counterpoint::CorruptFile&) {
  }
  return 0;
}
