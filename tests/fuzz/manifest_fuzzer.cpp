// Fuzzes ModelManifest::parse on arbitrary manifest.json text. Anything malformed must throw
// CorruptFile; a manifest that parses names only plain files and survives to_json -> parse.
#include <cstdint>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/encoder/manifest.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  counterpoint::ModelManifest manifest;
  try {
    manifest = counterpoint::ModelManifest::parse(text, "manifest.json");
  } catch (const counterpoint::CorruptFile&) {
    return 0;
  }
  FUZZ_CHECK(text.find('\0') == std::string::npos);  // a NUL never parses (nlohmann would stop at it)
  FUZZ_CHECK(manifest.embedding_dim > 0 && manifest.token_dim > 0 && manifest.max_length > 0);
  for (const auto& [name, sha] : manifest.files) {
    FUZZ_CHECK(!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..");
    FUZZ_CHECK(sha.size() == 64);
  }
  const counterpoint::ModelManifest again = counterpoint::ModelManifest::parse(manifest.to_json().dump(), "round trip");
  FUZZ_CHECK(again.to_json() == manifest.to_json());
  return 0;
}
