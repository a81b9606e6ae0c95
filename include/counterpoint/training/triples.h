// counterpoint/training/triples.h: training examples (anchor, positive, hard negatives) and the
// builders that derive them from the data sets counterpoint trains on (ArguAna, SICK, IBM claim
// stance) or from a plain TSV file. Every builder is deterministic for a given seed and reads
// only the split whose qrels/pairs file it is given, so held-out splits never leak into training.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "counterpoint/eval/retrieval_task.h"
#include "counterpoint/text/inversion.h"

namespace counterpoint::training {

// The seed of every builder and trainer unless the caller picks one: data order, sampling,
// initialisation. The structs below default to it; nothing else spells the number.
inline constexpr std::uint64_t kDefaultSeed = 42;

struct Triple {
  std::string anchor;
  std::string positive;
  std::vector<std::string> negatives;  // hard negatives, the same count in every triple of a set
  // Triples of one group (debate, topic, sentence) are never put in the same batch: their texts
  // would be false in-batch negatives for each other. "" = a group of its own.
  std::string group;
};

struct ArguAnaTripleOptions {
  std::size_t negatives_per_anchor = 1;
  std::uint64_t seed = kDefaultSeed;
};

// Anchor = the query argument, positive = its counter-argument (qrels), hard negatives = other
// arguments and counters of the same debate, split and side as the anchor; when the debate has
// too few, the rest come from its other side, then from random documents of the same split.
// group = debate. `beir_dir` holds corpus.jsonl and queries.jsonl; metadata.jsonl gives each
// document's split, debate and side.
std::vector<Triple> arguana_triples(const std::string& beir_dir, const std::string& qrels_path,
                                    const std::string& metadata_path,
                                    const ArguAnaTripleOptions& options = {});

// From SICK's pairs_{split}.tsv (pair_ID, sentence_A, sentence_B, entailment_label,
// entailment_AB, entailment_BA, relatedness_score), one triple per directed contradiction
// "X contradicts Y": anchor X, positive Y, hard negative a sentence X entails, else the most
// related sentence neutral to X, else a random sentence of the file. group = X's corpus id when
// `corpus_path` (corpus.jsonl) lists X's text, else X's text.
std::vector<Triple> sick_triples(const std::string& pairs_path, const std::string& corpus_path,
                                 std::uint64_t seed = kDefaultSeed);

// An instruction pair for stance-aware retrieval; a query is instruction + topic.
struct StanceTemplate {
  std::string support;  // e.g. "Find an argument supporting the claim: "
  std::string attack;
};
// Instructions used to build training queries, and different ones kept for evaluation, so a
// model can be tested on phrasings it never saw.
const std::vector<StanceTemplate>& training_stance_templates();
const std::vector<StanceTemplate>& held_out_stance_templates();
// "support" or "attack" -> the matching instruction + topic; InvalidArgument for other stances.
std::string stance_query(const StanceTemplate& instruction, const std::string& stance,
                         const std::string& topic);

enum class StanceCurriculum {
  kHomogeneous,  // every negative is hard: same topic, opposite stance
  kMixed,        // equal thirds hard / semi-hard (same stance, other topic) / easy (neither)
  // The mixed triples, each followed by a copy whose negative is its positive inverted by
  // text::Inverter (stance edit order): same words and topic, the other stance. Positives no
  // edit applies to get no copy, so the set holds count + (invertible triples) triples.
  kInverted,
  // Both directions: the inverted triples, and after each triple whose negative is a hard one
  // (same topic, other stance) that an edit applies to, a copy whose positive is that edit (the
  // asked stance in the hard claim's words) and whose negative is the hard claim itself.
  kInvertedBoth,
};
// "homogeneous", "mixed", "inverted", "inverted-both"
StanceCurriculum parse_stance_curriculum(const std::string& name);
std::string to_string(StanceCurriculum curriculum);

struct StanceTripleOptions {
  StanceCurriculum curriculum = StanceCurriculum::kMixed;
  std::size_t count = 2000;  // triples drawn (queries, positives and templates sampled with replacement)
  std::uint64_t seed = kDefaultSeed;
  std::vector<StanceTemplate> templates = training_stance_templates();
};

// IBM claim stance: queries t{topic}-{support|attack} of `qrels_path` (queries.jsonl gives the
// topic text and stance), positives their relevant claims, negatives drawn per the curriculum
// from claims (metadata.jsonl: topic_id, stance pro/con) of the topics in the same qrels file
// only; claim texts also listed under a topic outside that file are never used. group = topic id.
std::vector<Triple> claim_stance_triples(const std::string& beir_dir, const std::string& qrels_path,
                                         const std::string& metadata_path,
                                         const StanceTripleOptions& options = {});

// Which text of a triple add_inverted_negatives edits.
enum class InvertedText { kAnchor, kPositive };

// After each triple whose anchor (or positive) `inverter` can edit, a copy whose only negative is
// that edit: structure-targeted near-misses of the anchor ("A man is cutting a tomato" -> "A
// tomato is cutting a man") for verifiers, the positive's stance inversion for the inverted
// curriculum. Triples must have one negative each. Returns how many copies were added.
// With `flip_negatives` (one flag per triple given), a flagged triple whose negative an edit
// applies to is also followed by a copy whose positive is that edit and whose negative is the
// original negative: a hard stance negative inverted argues the asked stance. Counted too.
std::size_t add_inverted_negatives(std::vector<Triple>& triples, const text::Inverter& inverter,
                                   InvertedText which = InvertedText::kAnchor,
                                   const std::vector<bool>* flip_negatives = nullptr);

// The most a triple may hold, its texts together (a triples file's line): an encoder reads at most
// max_length tokens of a text (512 at most here, a few thousand characters) but tokenizes it whole
// first, so a 20 MB line cost 14 s and 950 MB to train on its first tokens (200 MB: minutes and
// about 10 GB). 1 MiB is hundreds of times any text a model reads.
inline constexpr std::size_t kMaxTripleBytes = std::size_t(1) << 20;
// InvalidArgument naming `caller` and the first triple whose texts together exceed kMaxTripleBytes.
void require_triple_sizes(const std::vector<Triple>& triples, const std::string& caller);

// Lines anchor<TAB>positive<TAB>negative[<TAB>group], no header. A line with another field
// count, an empty anchor/positive/negative, or above kMaxTripleBytes throws CorruptFile
// "file:line: ...".
std::vector<Triple> load_tsv_triples(const std::string& path);
// Several such files, concatenated in order.
std::vector<Triple> load_tsv_triples(const std::vector<std::string>& paths);

// Where a run's triples come from: the one dispatch over the builders above, which the CLI's
// `train --data` names.
enum class TripleData { kTsv, kArguAna, kSick, kStance };
TripleData parse_triple_data(const std::string& name);  // "tsv", "arguana", "sick", "stance"
std::string to_string(TripleData data);

struct TripleSource {
  TripleData data = TripleData::kTsv;
  std::vector<std::string> triple_files;  // kTsv
  std::string dataset;  // BEIR directory: kArguAna and kStance (with metadata.jsonl), kSick (corpus.jsonl)
  std::string qrels;    // the training split's qrels: kArguAna, kStance
  std::string pairs;    // SICK's pairs_<split>.tsv: kSick
  std::size_t negatives_per_anchor = ArguAnaTripleOptions{}.negatives_per_anchor;  // kArguAna
  StanceCurriculum curriculum = StanceTripleOptions{}.curriculum;                   // kStance
  std::size_t stance_count = StanceTripleOptions{}.count;                          // kStance
  std::uint64_t seed = kDefaultSeed;
};

// Checks `source` without reading it: InvalidArgument naming what it lacks (e.g. a dataset for
// kSick) or a count out of range, FileNotFound naming a file it needs that is not there.
void validate(const TripleSource& source);
// The triples of `source`, validated first.
std::vector<Triple> build_triples(const TripleSource& source);
// Provenance of `source` for a model's manifest: "tsv:a.tsv:b.tsv", "arguana:<dataset>".
std::string describe(const TripleSource& source);

// A retrieval task made of held-out triples, for tuning alpha on them
// (eval::tune_alpha_on_task): each anchor is a query (q0, q1, ...) whose one relevant passage is
// its positive; every distinct positive and negative is a document (d0, d1, ...).
eval::RetrievalTask dev_task(const std::vector<Triple>& triples);

// Removes the triples whose anchor or positive is one of `texts` (e.g. the dev queries, which
// SICK's train pairs partly share); returns how many were removed.
std::size_t remove_triples_mentioning(std::vector<Triple>& triples,
                                      const std::unordered_set<std::string>& texts);

}  // namespace counterpoint::training
