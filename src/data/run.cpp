#include "counterpoint/data/run.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <locale.h>
#include <optional>
#include <set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "line_reader.h"

namespace counterpoint::data {
namespace {

void require_token(const std::string& value, const std::string& what) {
  if (value.empty() || value.find_first_of(" \t\r\n") != std::string::npos) {
    throw InvalidArgument("write_trec_run: " + what + " \"" + value +
                          "\" must be non-empty and contain no whitespace");
  }
  // Readers drop a byte-order mark at the start of a file, so an id that begins with one would
  // lose it whenever its line comes first.
  if (value.rfind("\xEF\xBB\xBF", 0) == 0) {
    throw InvalidArgument("write_trec_run: " + what + " \"" + value +
                          "\" must not begin with a byte-order mark (U+FEFF)");
  }
}

// The score column as the float a run holds, or nothing when it is not a finite number. A number
// too small for a float (1e-320, a double's subnormal, as tools scoring in double write) is finite:
// it reads as a zero of its sign, as any C++ or Python float conversion rounds it. One too large
// for a float (1e39), inf and nan are not.
std::optional<float> parse_score(std::string_view text) {
  float value = 0.0f;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (end != text.data() + text.size()) return std::nullopt;
  // from_chars reports underflow and overflow alike; strtod, on text from_chars accepted, returns a
  // value below 1 in magnitude for the first and HUGE_VAL (or a double beyond float) for the second.
  // In the "C" locale, as from_chars reads, whatever locale a host program set.
  static const locale_t c_numbers = ::newlocale(LC_ALL_MASK, "C", locale_t(0));
  if (error == std::errc::result_out_of_range &&
      std::fabs(::strtod_l(std::string(text).c_str(), nullptr, c_numbers)) < 1.0) {
    return text.front() == '-' ? -0.0f : 0.0f;
  }
  if (error != std::errc() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string shortest_float(float value) {
  char buffer[32];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end);
}

}  // namespace

void write_trec_run(const std::string& path, const RankedRun& run, const std::string& tag) {
  require_token(tag, "tag");
  std::string out;
  for (const auto& [query_id, docs] : run) {
    require_token(query_id, "query id");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const ScoredDoc& doc = docs[i];
      require_token(doc.doc_id, "document id");
      if (!std::isfinite(doc.score)) {
        throw InvalidArgument("write_trec_run: score of document \"" + doc.doc_id +
                              "\" for query \"" + query_id + "\" is not finite");
      }
      if (!seen.insert(doc.doc_id).second) {
        throw InvalidArgument("write_trec_run: document \"" + doc.doc_id +
                              "\" listed twice for query \"" + query_id + "\"");
      }
      out += query_id + " Q0 " + doc.doc_id + " " + std::to_string(i + 1) + " " +
             shortest_float(doc.score) + " " + tag + "\n";
    }
  }
  write_file_atomic(path, out);
}

RankedRun read_trec_run(const std::string& path) {
  const std::string bytes = read_file(path);
  struct Entry {
    long rank;
    ScoredDoc doc;
  };
  std::map<std::string, std::vector<Entry>> entries;
  std::map<std::string, std::set<std::string>> seen;
  for (const detail::NumberedLine& line : detail::split_lines(bytes)) {
    if (detail::is_blank(line.text)) continue;
    detail::require_text(line.text, path, line.number);
    std::vector<std::string_view> fields = detail::split_fields(line.text);
    if (fields.size() != 6) {
      detail::throw_line_error(path, line.number,
                               "expected 6 fields (qid Q0 docid rank score tag), got " +
                                   std::to_string(fields.size()));
    }
    Entry entry{};
    std::string_view rank = fields[3];
    auto rank_result = std::from_chars(rank.data(), rank.data() + rank.size(), entry.rank);
    if (rank_result.ec != std::errc() || rank_result.ptr != rank.data() + rank.size()) {
      detail::throw_line_error(path, line.number,
                               "rank \"" + std::string(rank) + "\" is not an integer");
    }
    const std::string_view score = fields[4];
    const std::optional<float> parsed_score = parse_score(score);
    if (!parsed_score) {
      detail::throw_line_error(path, line.number,
                               "score \"" + std::string(score) + "\" is not a finite number");
    }
    entry.doc.score = *parsed_score;
    std::string query_id(fields[0]);
    entry.doc.doc_id = std::string(fields[2]);
    if (query_id.empty() || entry.doc.doc_id.empty()) detail::throw_line_error(path, line.number, "empty query or document id");
    if (!seen[query_id].insert(entry.doc.doc_id).second) {
      detail::throw_line_error(path, line.number,
                               "document \"" + entry.doc.doc_id + "\" listed twice for query \"" +
                                   query_id + "\"");
    }
    entries[query_id].push_back(std::move(entry));
  }
  RankedRun run;
  for (auto& [query_id, list] : entries) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
    std::vector<ScoredDoc>& docs = run[query_id];
    for (Entry& entry : list) docs.push_back(std::move(entry.doc));
  }
  return run;
}

}  // namespace counterpoint::data
