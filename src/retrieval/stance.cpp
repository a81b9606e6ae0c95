#include "counterpoint/retrieval/stance.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "counterpoint/core/errors.h"

namespace counterpoint::retrieval {
namespace {

// An instruction is short; a colon or question mark further in belongs to the claim.
constexpr std::size_t kMaxInstructionBytes = 200;

// Word stems, matched at the start of a word of the lowercased opening.
const std::vector<std::string> kAttackStems = {"against", "attack", "oppos", "refut", "rebut", "counter",
                                               "contradict", "disagree", "disprov", "undermin", "challeng", "object"};
const std::vector<std::string> kSupportStems = {"support", "favour", "favor", "agree", "defend", "endors", "justif",
                                                "confirm"};
// Whole words only: "background" names no stance.
const std::vector<std::string> kSupportWords = {"back", "backs", "backed", "backing"};
// An instruction opens with a request; an argument that happens to say "support" before a colon
// does not (ArguAna's queries hold such colons and question marks).
const std::vector<std::string> kRequestWords = {"find",    "retrieve", "show", "give",   "list",   "search",
                                                "get",     "fetch",    "which", "what",  "argue",  "name",
                                                "provide", "return",   "look", "cite",   "suggest"};
// After these, "for" belongs to the verb ("look for"), not to a stance ("evidence for").
const std::vector<std::string> kVerbsTakingFor = {"look", "search", "ask", "hunt"};
constexpr std::size_t kMaxInstructionWords = 15;

std::vector<std::string> lowercase_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalpha(c)) {
      word += static_cast<char>(std::tolower(c));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

bool contains(const std::vector<std::string>& list, const std::string& word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// "for" naming a stance: not right after a verb that takes it.
bool names_for(const std::vector<std::string>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "for" && (i == 0 || !contains(kVerbsTakingFor, words[i - 1]))) return true;
  }
  return false;
}

bool opens_with_request(const std::vector<std::string>& words) {
  if (words.empty() || words.size() > kMaxInstructionWords) return false;
  const std::size_t first = words[0] == "please" ? 1 : 0;
  return first < words.size() && contains(kRequestWords, words[first]);
}

bool names_any(const std::vector<std::string>& words, const std::vector<std::string>& stems) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
    return std::any_of(stems.begin(), stems.end(), [&](const std::string& s) { return w.rfind(s, 0) == 0; });
  });
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

Stance parse_stance(const std::string& name) {
  if (name == "from-query") return Stance::kFromQuery;
  if (name == "attack") return Stance::kAttack;
  if (name == "support") return Stance::kSupport;
  throw InvalidArgument("unknown stance '" + name + "' (expected from-query, attack or support)");
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
  const std::size_t end = query.find_first_of(":?");
  if (end != std::string::npos && end < kMaxInstructionBytes) {
    const std::string opening = query.substr(0, end + 1);
    const auto words = lowercase_words(opening);
    const bool attack = names_any(words, kAttackStems);
    const bool support = names_any(words, kSupportStems) ||
                         std::any_of(words.begin(), words.end(), [](const auto& w) { return contains(kSupportWords, w); }) ||
                         names_for(words);
    if (opens_with_request(words) && attack != support) {
      reading.stance = attack ? Stance::kAttack : Stance::kSupport;
      reading.instruction = trim(opening);
      reading.from_instruction = true;
      // An instruction with nothing after it leaves the query itself as the claim.
      if (std::string rest = trim(query.substr(end + 1)); !rest.empty()) reading.claim = std::move(rest);
    }
  }
  return reading;
}

std::string StanceReading::describe() const {
  if (given) return to_string(stance) + " (given)";
  if (from_instruction) return to_string(stance) + " (read from \"" + instruction + "\")";
  return to_string(stance) + " (no instruction: what contradicts the query)";
}

float sparsity_direction(Stance stance) {
  if (stance == Stance::kAttack) return 1.0f;
  if (stance == Stance::kSupport) return -1.0f;
  throw InvalidArgument("sparsity_direction: the stance must be read from the query first (read_stance)");
}

}  // namespace counterpoint::retrieval
