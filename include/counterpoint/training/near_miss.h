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

// The word overlap a contradiction needs to count as a near-miss unless the caller picks one.
inline constexpr double kDefaultMinOverlap = 0.5;

// One triple per directed entailment "X entails Y": anchor X, positive Y, negative the sentence
// Z that contradicts X with the highest word overlap with X (first in byte order on ties), kept
// only when that overlap is >= min_overlap. Z contradicts X when the file labels X and Z a
// contradiction in either direction, or labels Z a contradiction of Y (X entails Y). group = X.
std::vector<Triple> sick_near_miss_triples(const std::string& pairs_path, double min_overlap = kDefaultMinOverlap);

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
std::vector<LabeledPair> sick_near_miss_pairs(const std::string& pairs_path, double min_overlap = kDefaultMinOverlap);

// Where a verifier run's data comes from (`counterpoint train verifier`): SICK pairs files.
struct NearMissSource {
  std::string pairs;      // pairs_<split>.tsv of the training triples (sick_near_miss_triples)
  std::string dev_pairs;  // pairs file of the dev evaluation (sick_near_miss_pairs); "" = none
  double min_overlap = kDefaultMinOverlap;
  // Also train on structure-targeted negatives: after each triple whose anchor one of
  // `inverted_edits` applies to, a copy whose negative is that edit (add_inverted_negatives).
  bool inverted_negatives = false;
  std::vector<text::EditKind> inverted_edits = text::near_miss_edit_kinds();
};
// Checks `source` without reading it: FileNotFound for a missing file, InvalidArgument for
// min_overlap outside [0, 1] or no inverted edits when inverted negatives are asked for.
void validate(const NearMissSource& source);
// Provenance for the verifier's manifest: "sick-near-miss:<pairs>[ +inverted-negatives]".
std::string describe(const NearMissSource& source);

}  // namespace counterpoint::training
