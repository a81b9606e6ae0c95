#include "counterpoint/index/bm25.h"

#include <libstemmer.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "counterpoint/core/errors.h"
#include "counterpoint/text/words.h"

namespace counterpoint::index {

namespace {

// sb_stemmer keeps per-call state, so each analysis gets its own (cheap to create).
struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};
using StemmerPtr = std::unique_ptr<sb_stemmer, StemmerDeleter>;

StemmerPtr make_english_stemmer() {
  StemmerPtr stemmer(sb_stemmer_new("english", "UTF_8"));
  if (!stemmer) throw Error("libstemmer has no UTF-8 English stemmer");
  return stemmer;
}

}  // namespace

Bm25Index::Bm25Index(Bm25Options options) : options_(options) {
  if (!std::isfinite(options_.k1) || options_.k1 < 0.0f) {
    throw InvalidArgument("BM25 k1 must be finite and >= 0, got " + std::to_string(options_.k1));
  }
  if (!std::isfinite(options_.b) || options_.b < 0.0f || options_.b > 1.0f) {
    throw InvalidArgument("BM25 b must be in [0, 1], got " + std::to_string(options_.b));
  }
  if (options_.stem) make_english_stemmer();  // fail at construction, not at first use
}

std::vector<std::string> Bm25Index::analyze(std::string_view text) const {
  std::vector<std::string> tokens = text::alphanumeric_words(text);
  if (options_.stem) {
    StemmerPtr stemmer = make_english_stemmer();
    for (std::string& token : tokens) {
      const sb_symbol* stemmed = sb_stemmer_stem(
          stemmer.get(), reinterpret_cast<const sb_symbol*>(token.data()), int(token.size()));
      if (stemmed == nullptr) throw Error("libstemmer ran out of memory");
      token.assign(reinterpret_cast<const char*>(stemmed), std::size_t(sb_stemmer_length(stemmer.get())));
    }
  }
  return tokens;
}

void Bm25Index::add(std::int64_t slot, std::string_view text) { add_analyzed(slot, analyze(text)); }

void Bm25Index::add_analyzed(std::int64_t slot, const std::vector<std::string>& tokens) {
  if (slot < 0) throw InvalidArgument("BM25 slot must be >= 0, got " + std::to_string(slot));
  if (contains(slot)) throw InvalidArgument("BM25 slot " + std::to_string(slot) + " is already indexed");
  std::unordered_map<std::string, std::uint32_t> tf;
  for (const std::string& token : tokens) ++tf[token];

  const std::size_t need = std::size_t(slot) + 1;
  if (doc_length_.size() < need) {
    doc_length_.resize(need, 0);
    doc_terms_.resize(need);
    live_.resize(need, 0);
  }
  std::vector<Term*>& doc_terms = doc_terms_[std::size_t(slot)];
  doc_terms.clear();
  doc_terms.reserve(tf.size());
  for (const auto& [text, count] : tf) {
    Term& term = terms_[text];
    term.postings.push_back({slot, count});
    ++term.df;
    doc_terms.push_back(&term);
  }
  doc_length_[std::size_t(slot)] = std::uint32_t(tokens.size());
  live_[std::size_t(slot)] = 1;
  ++live_count_;
  total_length_ += tokens.size();
}

void Bm25Index::remove(std::int64_t slot) {
  if (!contains(slot)) throw InvalidArgument("BM25 slot " + std::to_string(slot) + " is not indexed");
  for (Term* term : doc_terms_[std::size_t(slot)]) --term->df;
  doc_terms_[std::size_t(slot)].clear();
  doc_terms_[std::size_t(slot)].shrink_to_fit();
  total_length_ -= doc_length_[std::size_t(slot)];
  live_[std::size_t(slot)] = 0;
  --live_count_;
}

bool Bm25Index::contains(std::int64_t slot) const {
  return slot >= 0 && std::size_t(slot) < live_.size() && live_[std::size_t(slot)] != 0;
}

float Bm25Index::idf(const Term& term) const {
  const double n = double(live_count_);
  const double df = double(term.df);
  return float(std::log(1.0 + (n - df + 0.5) / (df + 0.5)));
}

void Bm25Index::accumulate(std::string_view query, std::vector<float>& scores) const {
  scores.assign(doc_length_.size(), 0.0f);
  if (live_count_ == 0) return;
  const double avgdl = double(total_length_) / double(live_count_);
  const double k1 = options_.k1;
  const double b = options_.b;
  for (const std::string& token : analyze(query)) {
    auto it = terms_.find(token);
    if (it == terms_.end() || it->second.df == 0) continue;
    const double term_idf = idf(it->second);
    for (const Posting& p : it->second.postings) {
      const std::size_t s = std::size_t(p.slot);
      if (!live_[s]) continue;
      const double length_norm = avgdl > 0.0 ? double(doc_length_[s]) / avgdl : 0.0;
      const double tf = p.tf;
      scores[s] += float(term_idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * length_norm)));
    }
  }
}

std::vector<float> Bm25Index::score_all(std::string_view query) const {
  std::vector<float> scores;
  accumulate(query, scores);
  return scores;
}

std::vector<float> Bm25Index::score(std::string_view query, const std::vector<std::int64_t>& slots) const {
  std::vector<float> all;
  accumulate(query, all);
  std::vector<float> out(slots.size(), 0.0f);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (contains(slots[i])) out[i] = all[std::size_t(slots[i])];
  }
  return out;
}

std::vector<Bm25Hit> Bm25Index::search(std::string_view query, std::size_t k) const {
  if (k == 0) throw InvalidArgument("BM25 search needs k >= 1");
  std::vector<float> all;
  accumulate(query, all);
  std::vector<Bm25Hit> hits;
  for (std::size_t s = 0; s < all.size(); ++s) {
    if (all[s] > 0.0f) hits.push_back({std::int64_t(s), all[s]});
  }
  auto better = [](const Bm25Hit& a, const Bm25Hit& b) {
    return a.score != b.score ? a.score > b.score : a.slot < b.slot;
  };
  if (hits.size() > k) {
    std::partial_sort(hits.begin(), hits.begin() + std::ptrdiff_t(k), hits.end(), better);
    hits.resize(k);
  } else {
    std::sort(hits.begin(), hits.end(), better);
  }
  return hits;
}

}  // namespace counterpoint::index
