// counterpoint/data/tsv.h: tab-separated files whose columns the caller interprets (SICK's
// pairs, triples files). Fields are exact: split on every tab, never trimmed, since a text may
// begin or end with spaces.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace counterpoint::data {

struct TsvRow {
  std::vector<std::string> fields;
  std::size_t line = 0;  // 1-based, for "file:line: ..." messages
};

// The non-empty lines of `path` (ending at LF, CRLF or a lone CR), split on tabs; a leading BOM
// and the line endings are dropped.
// FileNotFound when there is no such file; the regular-file and size rules of core/files.h;
// CorruptFile "path:line: ..." for a line that is not valid UTF-8 or holds a NUL byte.
std::vector<TsvRow> read_tsv(const std::string& path);

}  // namespace counterpoint::data
