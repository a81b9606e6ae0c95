// counterpoint/training/near_miss.h: data for map verifiers, which must accept paraphrases and
// reject near-misses (a sentence with almost the same words that contradicts, e.g. by negation or
// swapped roles). Builds (anchor, paraphrase, near-miss) training triples and labelled evaluation
// pairs from SICK's pairs_{split}.tsv; each builder reads only the file it is given.
#pragma once

#include <string>
#include <vector>

#include "counterpoint/training/triples.h"

namespace counterpoint::training {

// |W(a) & W(b)| / |W(a) | W(b)| over the sets of lower-cased ASCII alphanumeric words
// (apostrophes kept inside words); 0 when both are empty.
double word_overlap(const std::string& a, const std::string& b);

// One triple per directed entailment "X entails Y": anchor X, positive Y, negative the sentence
// Z that contradicts X with the highest word overlap with X (first in byte order on ties), kept
// only when that overlap is >= min_overlap. Z contradicts X when the file labels X and Z a
// contradiction in either direction, or labels Z a contradiction of Y (X entails Y). group = X.
std::vector<Triple> sick_near_miss_triples(const std::string& pairs_path, double min_overlap = 0.5);

struct LabeledPair {
  std::string query;
  std::string candidate;
  bool near_miss = false;  // false: a paraphrase (query entails candidate)
  bool operator==(const LabeledPair& other) const {
    return query == other.query && candidate == other.candidate && near_miss == other.near_miss;
  }
};

// Every directed entailment of the file as a paraphrase pair, and every directed contradiction
// whose word overlap is >= min_overlap as a near-miss pair, ordered by query (byte order), then
// paraphrases before near-misses in file order.
std::vector<LabeledPair> sick_near_miss_pairs(const std::string& pairs_path, double min_overlap = 0.5);

}  // namespace counterpoint::training
