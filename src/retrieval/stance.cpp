#include "counterpoint/retrieval/stance.h"

#include <algorithm>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/spelling.h"
#include "counterpoint/text/words.h"

namespace counterpoint::retrieval {
namespace {

// An instruction is short; a colon or question mark further in belongs to the claim.
constexpr std::size_t kMaxInstructionBytes = 200;
constexpr std::size_t kMaxInstructionWords = 15;

// Whole words: a stem would also match "counterpart", "objective" or "agreement".
const std::vector<std::string> kAttackWords = {
    "against",       "attack",          "attacks",          "attacking",    "oppose",        "opposes",
    "opposing",      "refute",          "refutes",          "refuting",     "refutation",    "rebut",
    "rebuts",        "rebutting",       "rebuttal",         "counter",      "counters",      "countering",
    "counterargument", "counterarguments", "counterclaim",  "counterclaims", "contradict",   "contradicts",
    "contradicting", "contradiction",   "contradictions",   "contradictory", "disagree",    "disagrees",
    "disagreeing",   "disprove",        "disproves",        "disproving",   "undermine",     "undermines",
    "undermining",   "challenge",       "challenges",       "challenging",  "objection",     "objections"};
const std::vector<std::string> kSupportWords = {
    "support",    "supports",   "supporting",  "favour",     "favor",        "favouring",    "favoring",
    "back",       "backs",      "backing",     "agree",      "agrees",       "agreeing",     "defend",
    "defends",    "defending",  "endorse",     "endorses",   "endorsing",    "justify",      "justifies",
    "justifying", "confirm",    "confirms",    "confirming", "corroborate",  "corroborates", "corroborating",
    "reinforce",  "reinforces", "reinforcing", "prove",      "proves",       "proving"};
// "for" names support after these only ("evidence for", "argue for"), never in "good for the heart".
const std::vector<std::string> kWordsBeforeFor = {"evidence", "argument", "arguments", "argue",  "case",
                                                  "reason",   "reasons",  "point",     "points", "claim",
                                                  "claims",   "motion"};
// A negated request ("do not agree with", "isn't against") is not read: what it asks for is unclear.
// "t" is what the word split leaves of "don't", "isn't".
const std::vector<std::string> kNegations = {"not", "no", "never", "without", "nor", "t"};
// An instruction opens with a request; an argument that happens to say "support" before a colon
// does not (ArguAna's queries hold such colons and question marks).
const std::vector<std::string> kRequestWords = {"find",   "retrieve", "show",  "give", "list",    "search",
                                                "get",    "fetch",    "which", "what", "argue",   "name",
                                                "provide", "return",  "look",  "cite", "suggest", "given"};
bool contains(const std::vector<std::string>& list, const std::string& word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

bool any_of_words(const std::vector<std::string>& words, const std::vector<std::string>& list) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return contains(list, w); });
}

bool names_support(const std::vector<std::string>& words) {
  if (any_of_words(words, kSupportWords)) return true;
  for (std::size_t i = 1; i < words.size(); ++i) {
    if (words[i] == "for" && contains(kWordsBeforeFor, words[i - 1])) return true;
  }
  return false;
}

bool opens_with_request(const std::vector<std::string>& words) {
  const std::size_t first = !words.empty() && words[0] == "please" ? 1 : 0;
  return first < words.size() && contains(kRequestWords, words[first]);
}

// Where the instruction of `query` ends (one past it), or npos: E5's "Instruct: ...\nQuery: X", else
// an opening request up to its first ':' or '?'.
std::size_t instruction_end(const std::string& query, bool& marked) {
  const std::string head = ascii_lower(query.substr(0, kMaxInstructionBytes + 8));
  marked = head.rfind("instruct:", 0) == 0;
  if (marked) {
    const std::size_t q = head.find("\nquery:");
    return q == std::string::npos ? std::string::npos : q + 8;
  }
  const std::size_t end = query.find_first_of(":?");
  return end != std::string::npos && end < kMaxInstructionBytes ? end + 1 : std::string::npos;
}

}  // namespace

Stance parse_stance(const std::string& typed) {
  const std::string name = ascii_lower(typed);
  if (name == "from-query") return Stance::kFromQuery;
  if (name == "attack") return Stance::kAttack;
  if (name == "support") return Stance::kSupport;
  throw InvalidArgument("unknown stance '" + typed + "' (expected from-query, attack or support)" +
                        did_you_mean(typed, {"from-query", "attack", "support"}));
}

std::string to_string(Stance stance) {
  switch (stance) {
    case Stance::kFromQuery: return "from-query";
    case Stance::kAttack: return "attack";
    case Stance::kSupport: return "support";
  }
  throw InvalidArgument("to_string: unknown Stance value " + std::to_string(static_cast<int>(stance)));
}

StanceReading read_stance(const std::string& query, Stance requested) {
  StanceReading reading;
  reading.claim = query;
  if (requested != Stance::kFromQuery) {  // told, not read: the query is taken as it is
    reading.stance = requested;
    reading.given = true;
    return reading;
  }
  bool marked = false;
  const std::size_t end = instruction_end(query, marked);
  if (end == std::string::npos) return reading;
  const std::string opening = query.substr(0, end);
  std::vector<std::string> words;
  try {
    words = text::alphanumeric_words(opening);
  } catch (const InvalidArgument& e) {  // the tokenizers refuse such a query too
    throw InvalidArgument(std::string("a query's ") + e.what());
  }
  if (words.size() > kMaxInstructionWords + (marked ? 1 : 0) || (!marked && !opens_with_request(words))) return reading;
  const bool attack = any_of_words(words, kAttackWords);
  const bool support = names_support(words);
  if (attack == support || any_of_words(words, kNegations)) return reading;
  reading.stance = attack ? Stance::kAttack : Stance::kSupport;
  reading.instruction = text::trim_blanks(opening);
  reading.from_instruction = true;
  // An instruction with nothing after it leaves the query itself as the claim.
  std::string rest = text::trim_blanks(std::string_view(query).substr(end));
  if (!rest.empty()) reading.claim = std::move(rest);
  return reading;
}

std::string StanceReading::describe() const {
  if (given) return to_string(stance) + " (given)";
  if (from_instruction) return to_string(stance) + " (read from \"" + instruction + "\")";
  return to_string(stance) + " (no instruction: what contradicts the query)";
}

Stance resolve_stance(Stance read, Stance requested) {
  if (read != Stance::kFromQuery) return read;
  return requested != Stance::kFromQuery ? requested : Stance::kAttack;
}

float sparsity_direction(Stance stance) {
  if (stance == Stance::kAttack) return 1.0f;
  if (stance == Stance::kSupport) return -1.0f;
  throw InvalidArgument("sparsity_direction: the stance must be read from the query first (read_stance)");
}

}  // namespace counterpoint::retrieval
