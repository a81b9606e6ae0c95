// Internal to the training layer: SICK's labelled pairs as per-sentence relations, shared by the
// contradiction triples (triples.cpp) and the verifier near-miss data (near_miss.cpp). The file
// itself is read by data::read_tsv.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>


namespace counterpoint::training::detail {

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
