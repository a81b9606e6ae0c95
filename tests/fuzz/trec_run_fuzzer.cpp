// Fuzzes the TREC run reader on arbitrary file content. Damaged input must throw CorruptFile;
// a run that loads must have non-empty ids and finite scores, and write back and re-read to
// the same run unless an id is one the writer refuses: one holding a space (tab-separated lines
// allow it, the space-separated writer cannot express it) or one beginning with a byte-order mark
// (which the reader drops at the start of a file).
#include <cmath>
#include <cstdint>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/data/run.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = counterpoint::fuzz::scratch_path("run.trec");
  counterpoint::fuzz::write_bytes(path, reinterpret_cast<const char*>(data), size);
  counterpoint::data::RankedRun run;
  try {
    run = counterpoint::data::read_trec_run(path);
  } catch (const counterpoint::CorruptFile&) {
    return 0;
  }
  bool unwritable_id = false;
  const auto unwritable = [](const std::string& id) {
    return id.find_first_of(" \t\r\n") != std::string::npos || id.rfind("\xEF\xBB\xBF", 0) == 0;
  };
  for (const auto& [query, docs] : run) {
    FUZZ_CHECK(!query.empty());
    unwritable_id |= unwritable(query);
    for (const auto& doc : docs) {
      FUZZ_CHECK(!doc.doc_id.empty());
      FUZZ_CHECK(std::isfinite(doc.score));
      unwritable_id |= unwritable(doc.doc_id);
    }
  }
  const std::string copy = counterpoint::fuzz::scratch_path("run_copy.trec");
  try {
    counterpoint::data::write_trec_run(copy, run);
  } catch (const counterpoint::InvalidArgument&) {
    FUZZ_CHECK(unwritable_id);
    return 0;
  }
  FUZZ_CHECK(counterpoint::data::read_trec_run(copy) == run);
  return 0;
}
