// Fuzzes the qrels reader (BEIR TSV with header, 3-column and TREC 4-column layouts) and the
// TSV corpus reader on arbitrary file content. Input: byte 0 picks the reader, the rest is
// the file. Damaged input must throw CorruptFile.
#include <cstdint>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/corpus_files.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string path = counterpoint::fuzz::scratch_path("qrels.tsv");
  counterpoint::fuzz::write_bytes(path, reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] & 1) {
      for (const auto& doc : counterpoint::data::load_tsv_documents(path)) FUZZ_CHECK(!doc.id.empty());
    } else {
      for (const auto& [query, judged] : counterpoint::data::load_qrels(path)) {
        FUZZ_CHECK(!query.empty());
        for (const auto& [doc, grade] : judged) FUZZ_CHECK(!doc.empty());
      }
    }
  } catch (const counterpoint::CorruptFile&) {
  }
  return 0;
}
