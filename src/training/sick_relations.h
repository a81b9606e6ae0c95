// Internal to the training layer: reading the tab-separated files its data builders use, and
// SICK's labelled pairs as per-sentence relations, shared by the contradiction triples
// (triples.cpp) and the verifier near-miss data (near_miss.cpp).
#pragma once

#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint::training::detail {

// Tab-separated lines of a text file, CR stripped; `visit(fields, line_number)`.
template <typename Visit>
void for_each_tsv_line(const std::string& path, Visit visit) {
  if (!path_exists(path)) throw FileNotFound("file not found: " + path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open " + path);
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
      const std::size_t tab = line.find('\t', start);
      fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    visit(fields, number);
  }
}

// How the other sentences of SICK's pairs file relate to one sentence X, per direction: X
// contradicts / entails / is neutral to each listed sentence.
struct SickRelated {
  std::vector<std::string> contradicted, entailed;
  std::vector<std::pair<double, std::string>> neutral;  // (relatedness, sentence)
};

struct SickRelations {
  std::map<std::string, SickRelated> of;  // sentence X -> its relations
  std::vector<std::string> sentences;     // sentence_A and sentence_B of every line, in file order
};

// Reads pairs_{split}.tsv (header with sentence_A, sentence_B, entailment_AB, entailment_BA,
// relatedness_score); a missing column, a short line, an unknown relation or a non-numeric
// relatedness throws CorruptFile "file:line: ...".
SickRelations read_sick_relations(const std::string& pairs_path);

}  // namespace counterpoint::training::detail
