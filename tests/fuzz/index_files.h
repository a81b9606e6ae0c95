// The input format of the index_load fuzzer: a saved index directory packed into one byte
// string, so that libFuzzer can mutate every file of it at once. Layout: one flags byte, then
// for each file the marker "\n@@FILE <name>\n" followed by its bytes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace counterpoint::fuzz {

inline const std::string kFileMarker = "\n@@FILE ";

// (name, bytes) pairs in input order; text before the first marker is ignored.
inline std::vector<std::pair<std::string, std::string>> unpack_files(const std::string& packed) {
  std::vector<std::pair<std::string, std::string>> files;
  std::size_t at = packed.find(kFileMarker);
  while (at != std::string::npos) {
    const std::size_t name_begin = at + kFileMarker.size();
    const std::size_t name_end = packed.find('\n', name_begin);
    if (name_end == std::string::npos) break;
    const std::size_t next = packed.find(kFileMarker, name_end + 1);
    const std::size_t body_end = next == std::string::npos ? packed.size() : next;
    files.emplace_back(packed.substr(name_begin, name_end - name_begin),
                       packed.substr(name_end + 1, body_end - name_end - 1));
    at = next;
  }
  return files;
}

inline std::string pack_file(const std::string& name, const std::string& bytes) {
  return kFileMarker + name + "\n" + bytes;
}

}  // namespace counterpoint::fuzz
