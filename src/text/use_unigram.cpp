#include "counterpoint/text/use_unigram.h"

#include <nlohmann/json.hpp>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/json_document.h"
#include "counterpoint/core/files.h"
#include "unicode.h"

namespace counterpoint {
namespace {

constexpr char32_t kWordSeparator = 0x2581;  // LOWER ONE EIGHTH BLOCK

uint64_t child_key(int32_t node, char32_t symbol) {
  return (static_cast<uint64_t>(node) << 21) | static_cast<uint64_t>(symbol);
}

// JavaScript's String.length: UTF-16 code units.
int32_t utf16_length(const std::u32string& cps) {
  int32_t n = 0;
  for (char32_t cp : cps) n += cp > 0xFFFF ? 2 : 1;
  return n;
}

}  // namespace

UseUnigramTokenizer::UseUnigramTokenizer(std::vector<std::pair<std::string, double>> vocabulary,
                                         const std::string& source) {
  if (vocabulary.size() <= kReservedIds) {
    throw CorruptFile(source + ": " + std::to_string(vocabulary.size()) +
                      " pieces, but ids 0.." + std::to_string(kReservedIds - 1) +
                      " are reserved and at least one real piece is needed");
  }
  if (vocabulary[0].first.empty()) {
    throw CorruptFile(source + ": piece 0 (the unknown piece) is empty");
  }
  nodes_.emplace_back();
  pieces_.reserve(vocabulary.size());
  utf16_lengths_.reserve(vocabulary.size());
  for (std::size_t id = 0; id < vocabulary.size(); ++id) {
    auto& [piece, score] = vocabulary[id];
    try {
      text::require_valid_utf8(piece, "piece " + std::to_string(id));
    } catch (const InvalidArgument& e) {
      throw CorruptFile(source + ": " + e.what());
    }
    std::u32string symbols = text::decode(piece);
    utf16_lengths_.push_back(utf16_length(symbols));
    pieces_.push_back(std::move(piece));
    if (id < kReservedIds || symbols.empty()) continue;
    int32_t node = 0;
    for (char32_t symbol : symbols) {
      auto [it, inserted] = children_.emplace(child_key(node, symbol), static_cast<int32_t>(nodes_.size()));
      if (inserted) {
        TrieNode next;
        next.length = nodes_[static_cast<std::size_t>(node)].length + 1;
        nodes_.push_back(next);
      }
      node = it->second;
    }
    // A repeated piece overwrites the earlier one, as the original trie does.
    TrieNode& end = nodes_[static_cast<std::size_t>(node)];
    end.is_piece = true;
    end.score = score;
    end.id = static_cast<int32_t>(id);
  }
}

UseUnigramTokenizer UseUnigramTokenizer::from_file(const std::string& vocab_json_path) {
  const nlohmann::json doc = read_json_document(vocab_json_path);
  if (!doc.is_array()) throw CorruptFile(vocab_json_path + ": expected a JSON array of [piece, score]");
  std::vector<std::pair<std::string, double>> vocabulary;
  vocabulary.reserve(doc.size());
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const auto& entry = doc[i];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() ||
        !(entry[1].is_number() || entry[1].is_null())) {
      throw CorruptFile(vocab_json_path + ": entry " + std::to_string(i) +
                        " is not [piece, score] (got " + entry.dump() + ")");
    }
    // JavaScript adds null as 0.
    double score = entry[1].is_null() ? 0.0 : entry[1].get<double>();
    vocabulary.emplace_back(entry[0].get<std::string>(), score);
  }
  return UseUnigramTokenizer(std::move(vocabulary), vocab_json_path);
}

int32_t UseUnigramTokenizer::child(int32_t node, char32_t symbol) const {
  auto it = children_.find(child_key(node, symbol));
  return it == children_.end() ? -1 : it->second;
}

Encoding UseUnigramTokenizer::encode(std::string_view input, std::size_t max_length) const {
  text::require_valid_utf8(input, "text");
  std::u32string symbols = text::decode(text::nfkc(input));
  if (!symbols.empty()) {
    for (char32_t& cp : symbols) {
      if (cp == U' ') cp = kWordSeparator;
    }
    symbols.insert(symbols.begin(), kWordSeparator);
  }
  const std::size_t n = symbols.size();

  // Lattice best path. Processing start positions in increasing order updates each end
  // position in the same order as the original, which walks end positions and, within each,
  // start positions in increasing order; best[start] is final before it is read.
  std::vector<double> best(n + 1, 0.0);
  std::vector<int32_t> words(n + 1, 0);
  auto offer = [&](std::size_t start, std::size_t end, double score, int32_t id) {
    double total = score + best[start];
    if (best[end] == 0.0 || total >= best[end]) {
      best[end] = total;
      words[end] = id;
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    bool matched = false;
    int32_t node = child(0, symbols[i]);
    for (std::size_t j = i; node >= 0;) {
      const TrieNode& t = nodes_[static_cast<std::size_t>(node)];
      if (t.is_piece) {
        offer(i, i + static_cast<std::size_t>(t.length), t.score, t.id);
        matched = true;
      }
      if (++j >= n) break;
      node = child(node, symbols[j]);
    }
    if (!matched) offer(i, i + 1, 0.0, 0);
  }

  // Back-trace by each piece's UTF-16 length, then collapse runs of the unknown id.
  std::vector<int32_t> reversed;
  for (std::ptrdiff_t at = static_cast<std::ptrdiff_t>(n); at > 0;) {
    int32_t id = words[static_cast<std::size_t>(at)];
    reversed.push_back(id);
    at -= utf16_lengths_[static_cast<std::size_t>(id)];
  }
  Encoding e;
  bool previous_unknown = false;
  for (auto it = reversed.rbegin(); it != reversed.rend(); ++it) {
    if (!(previous_unknown && *it == 0)) e.ids.push_back(*it);
    previous_unknown = *it == 0;
  }
  if (max_length != 0 && e.ids.size() > max_length) {
    e.ids.resize(max_length);
    e.truncated = true;
  }
  e.type_ids.assign(e.ids.size(), 0);
  e.pieces.reserve(e.ids.size());
  for (int64_t id : e.ids) e.pieces.push_back(pieces_[static_cast<std::size_t>(id)]);
  return e;
}

}  // namespace counterpoint
