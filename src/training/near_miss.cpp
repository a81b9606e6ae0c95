#include "counterpoint/training/near_miss.h"

#include <set>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/text/words.h"
#include "sick_relations.h"

namespace counterpoint::training {

namespace {

void require_overlap_threshold(double min_overlap) {
  if (!(min_overlap >= 0.0 && min_overlap <= 1.0)) {
    throw InvalidArgument("min_overlap must be in [0, 1], got " + std::to_string(min_overlap));
  }
}

}  // namespace

double word_overlap(const std::string& a, const std::string& b) {
  const auto wa = text::distinct_ascii_words(a);
  const auto wb = text::distinct_ascii_words(b);
  std::size_t shared = 0;
  for (const auto& w : wa) shared += wb.count(w);
  const std::size_t total = wa.size() + wb.size() - shared;
  return total == 0 ? 0.0 : double(shared) / double(total);
}

std::vector<Triple> sick_near_miss_triples(const std::string& pairs_path, double min_overlap) {
  require_overlap_threshold(min_overlap);
  const detail::SickRelations relations = detail::read_sick_relations(pairs_path);
  // Contradiction is symmetric in meaning even where annotators labelled one direction only.
  std::map<std::string, std::set<std::string>> contradictions;
  for (const auto& [x, related] : relations.of) {
    for (const auto& z : related.contradicted) {
      contradictions[x].insert(z);
      contradictions[z].insert(x);
    }
  }
  const auto contradictions_of = [&](const std::string& s) -> const std::set<std::string>& {
    static const std::set<std::string> none;
    auto it = contradictions.find(s);
    return it == contradictions.end() ? none : it->second;
  };

  std::vector<Triple> triples;
  for (const auto& [x, related] : relations.of) {
    for (const auto& y : related.entailed) {
      std::set<std::string> candidates = contradictions_of(x);
      for (const auto& z : contradictions_of(y)) candidates.insert(z);
      const std::string* best = nullptr;
      double best_overlap = -1.0;
      for (const auto& z : candidates) {
        if (z == x || z == y) continue;
        const double overlap = word_overlap(x, z);
        if (overlap > best_overlap) {
          best_overlap = overlap;
          best = &z;
        }
      }
      if (best == nullptr || best_overlap < min_overlap) continue;
      triples.push_back(Triple{x, y, {*best}, x});
    }
  }
  return triples;
}

std::vector<LabeledPair> sick_near_miss_pairs(const std::string& pairs_path, double min_overlap) {
  require_overlap_threshold(min_overlap);
  const detail::SickRelations relations = detail::read_sick_relations(pairs_path);
  std::vector<LabeledPair> pairs;
  for (const auto& [x, related] : relations.of) {
    for (const auto& y : related.entailed) pairs.push_back({x, y, false});
    for (const auto& z : related.contradicted) {
      if (word_overlap(x, z) >= min_overlap) pairs.push_back({x, z, true});
    }
  }
  return pairs;
}

void validate(const NearMissSource& source) {
  require_overlap_threshold(source.min_overlap);
  if (source.inverted_negatives && source.inverted_edits.empty()) {
    throw InvalidArgument("inverted negatives need at least one edit kind");
  }
  if (source.pairs.empty()) throw InvalidArgument("near-miss triples need a pairs file (pairs_<split>.tsv)");
  require_regular_file(source.pairs);
  if (!source.dev_pairs.empty()) require_regular_file(source.dev_pairs);
}

std::string describe(const NearMissSource& source) {
  return "sick-near-miss:" + source.pairs + (source.inverted_negatives ? " +inverted-negatives" : "");
}

}  // namespace counterpoint::training
