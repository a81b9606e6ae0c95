// counterpoint/text/inversion.h: minimal edits that reverse what a sentence asserts while keeping
// its words and substance: the synthetic hard negatives of stance training ("X increases Y" ->
// "X decreases Y") and the structure-targeted near-misses of verifier training ("A man is cutting
// a tomato" -> "A tomato is cutting a man"). Deterministic: the same text and edit list always
// give the same result. Antonyms come from WordNet (Debian's libwordnet and wordnet-base); the
// rest is a handful of closed-class word lists (auxiliaries, negations, connectives).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace counterpoint::text {

// One kind of edit. An Inverter tries its kinds in the order given and applies the first that
// matches, at its first matching word (left to right): exactly one edit per text.
enum class EditKind {
  kNegationRemoved,   // "is not harmful" -> "is harmful"; "doesn't" -> "does"; "cannot" -> "can"; "never" dropped
  kVerbAntonym,       // a relational verb, inflection kept: "increases" -> "decreases", "supported" -> "opposed"
  kAdjectiveAntonym,  // a direct WordNet antonym of an adjective: "beneficial" -> "harmful"
  kNegationAdded,     // "not" after the first auxiliary or modal: "should be banned" -> "should not be banned"
  kConnectiveSwap,    // a contrastive conjunction: "but" <-> "and", "although" <-> "because"
  kRoleSwap,          // subject and object of "<det> N is V-ing <det> N" (the only pattern taken as unambiguous)
};
std::string to_string(EditKind kind);  // "negation-removed", "verb-antonym", ...
EditKind parse_edit_kind(const std::string& name);  // the inverse; InvalidArgument naming the valid names
// Every kind, in declaration order.
const std::vector<EditKind>& all_edit_kinds();
// The order that inverts a claim's stance: removing a negation is exact, antonyms keep the
// sentence's shape, adding "not" works on almost any claim, connectives come last.
const std::vector<EditKind>& stance_edit_kinds();
// The order for near-miss negatives of a sentence (verifier training): the structural swap first,
// then the word-level edits, adding "not" (which fits almost every sentence) last.
const std::vector<EditKind>& near_miss_edit_kinds();

struct Inversion {
  std::string text;    // the edited text (whitespace and punctuation of the input kept)
  EditKind kind;
  std::string before;  // the words the edit replaced or removed ("" for an insertion); role swap: "A man|a tomato"
  std::string after;   // the words it put there ("" for a removal)
  bool operator==(const Inversion& other) const {
    return text == other.text && kind == other.kind && before == other.before && after == other.after;
  }
};

struct InverterOptions {
  std::vector<EditKind> edits = stance_edit_kinds();
};

// Opens the WordNet database on first use (the directory of $WNSEARCHDIR, else $WNHOME/dict,
// else /usr/share/wordnet, as libwordnet does); FileNotFound when it lacks data.adj. Safe to call
// from several threads (WordNet look-ups are serialised; the library keeps global state).
class Inverter {
 public:
  explicit Inverter(InverterOptions options = {});
  // The first edit of options().edits that applies, or nullopt when none does (including an empty
  // or all-whitespace text). InvalidArgument on invalid UTF-8, naming the byte offset.
  std::optional<Inversion> invert(std::string_view text) const;
  std::vector<std::optional<Inversion>> invert(const std::vector<std::string>& texts) const;
  const InverterOptions& options() const { return options_; }

 private:
  InverterOptions options_;
};

// The WordNet direct antonyms of `lemma` as part of speech "adjective" or "verb", senses in
// WordNet's order (most frequent first), each antonym once; lower-case, spaces for underscores.
// Exposed for tests and for readers who want to see what the inverter can draw on.
std::vector<std::string> wordnet_antonyms(const std::string& lemma, const std::string& part_of_speech);

}  // namespace counterpoint::text
