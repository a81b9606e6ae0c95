#include "counterpoint/text/inversion.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "unicode.h"

extern "C" {
#include <wn.h>
}

namespace counterpoint::text {

namespace {

// ---- WordNet ----------------------------------------------------------------------------------
// libwordnet keeps open files and static buffers in globals, so every call goes through one lock.

std::mutex& wordnet_mutex() {
  static std::mutex m;
  return m;
}

std::string wordnet_directory() {
  if (const char* dir = std::getenv("WNSEARCHDIR"); dir && *dir) return dir;
  if (const char* home = std::getenv("WNHOME"); home && *home) return std::string(home) + "/dict";
  return "/usr/share/wordnet";
}

// Opens the database once per process; caller holds wordnet_mutex().
void open_wordnet_locked() {
  static bool opened = false;
  if (opened) return;
  const std::string dir = wordnet_directory();
  if (!path_exists(dir + "/data.adj") || !path_exists(dir + "/index.verb")) {
    throw FileNotFound("WordNet database not found in " + dir +
                       " (Debian: apt-get install wordnet-base; elsewhere set WNSEARCHDIR to its dict directory)");
  }
  if (wninit() != 0) throw IoError("libwordnet could not open its database in " + dir);
  opened = true;
}

int wordnet_pos(const std::string& part_of_speech) {
  if (part_of_speech == "adjective") return ADJ;
  if (part_of_speech == "verb") return VERB;
  throw InvalidArgument("part of speech must be 'adjective' or 'verb', got '" + part_of_speech + "'");
}

std::string from_wordnet(std::string word) {
  // Adjective words may carry a syntactic marker, e.g. "galore(ip)".
  if (auto paren = word.find('('); paren != std::string::npos) word.erase(paren);
  std::replace(word.begin(), word.end(), '_', ' ');
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return word;
}

// Direct antonyms over the senses of the exact lemma; caller holds the lock.
std::vector<std::string> antonyms_locked(const std::string& lemma, int pos) {
  std::vector<std::string> found;
  std::string key = lemma;
  std::replace(key.begin(), key.end(), ' ', '_');
  IndexPtr index = index_lookup(key.data(), pos);
  if (!index) return found;
  for (int sense = 0; sense < index->off_cnt; ++sense) {
    SynsetPtr synset = read_synset(pos, long(index->offset[sense]), key.data());
    if (!synset) continue;
    for (int p = 0; p < synset->ptrcount; ++p) {
      // An antonym is a lexical pointer: from one word of this synset to one word of the other.
      if (synset->ptrtyp[p] != ANTPTR || synset->pfrm[p] != synset->whichword) continue;
      SynsetPtr target = read_synset(synset->ppos[p], synset->ptroff[p], nullptr);
      if (!target) continue;
      const int to = synset->pto[p] - 1;
      if (to >= 0 && to < target->wcount) {
        std::string word = from_wordnet(target->words[to]);
        if (std::find(found.begin(), found.end(), word) == found.end()) found.push_back(std::move(word));
      }
      free_synset(target);
    }
    free_synset(synset);
  }
  free_index(index);
  return found;
}

// The lemmas WordNet's morphology gives for an inflected word (the word itself first when it is
// a lemma of that part of speech); caller holds the lock.
std::vector<std::string> lemmas_locked(const std::string& word, int pos) {
  std::vector<std::string> lemmas;
  std::string key = word;
  if (IndexPtr index = index_lookup(key.data(), pos)) {
    lemmas.push_back(word);
    free_index(index);
  }
  for (char* base = morphstr(key.data(), pos); base; base = morphstr(nullptr, pos)) {
    std::string lemma = from_wordnet(base);
    if (std::find(lemmas.begin(), lemmas.end(), lemma) == lemmas.end()) lemmas.push_back(std::move(lemma));
  }
  return lemmas;
}

// ---- words ------------------------------------------------------------------------------------

// A word: a whitespace-separated run less its leading and trailing punctuation. A run with other
// punctuation inside ("side-effects", "P.E.") is not a word here, so no edit ever touches it.
struct Token {
  std::size_t begin = 0, end = 0;            // the word's bytes in the text
  std::string lower;                         // the word, lower-cased (ASCII)
  bool capitalized = false;
};

bool is_word_byte(unsigned char c) { return std::isalnum(c) || c == '\'' || c >= 0x80; }

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    std::size_t end = pos;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    if (end == pos) break;
    std::size_t b = pos, e = end;
    while (b < e && !std::isalnum(static_cast<unsigned char>(text[b])) && static_cast<unsigned char>(text[b]) < 0x80) ++b;
    while (e > b && !std::isalnum(static_cast<unsigned char>(text[e - 1])) && static_cast<unsigned char>(text[e - 1]) < 0x80) --e;
    if (b < e && std::all_of(text.begin() + b, text.begin() + e, [](char c) { return is_word_byte(c); })) {
      Token t{b, e, std::string(text.substr(b, e - b)), std::isupper(static_cast<unsigned char>(text[b])) != 0};
      std::transform(t.lower.begin(), t.lower.end(), t.lower.begin(),
                     [](unsigned char c) { return c < 0x80 ? char(std::tolower(c)) : char(c); });
      tokens.push_back(std::move(t));
    }
    pos = end;
  }
  return tokens;
}

std::string capitalize_like(std::string word, bool capitalized) {
  if (capitalized && !word.empty()) word[0] = char(std::toupper(static_cast<unsigned char>(word[0])));
  return word;
}

// The text with bytes [begin, end) replaced.
std::string splice(std::string_view text, std::size_t begin, std::size_t end, const std::string& with) {
  return std::string(text.substr(0, begin)) + with + std::string(text.substr(end));
}

// Removes the word [begin, end) with the whitespace after it, or before it when punctuation or the
// end of the text follows ("is not." -> "is."). A capital the word had passes to what follows it.
std::string remove_word(std::string_view text, std::size_t begin, std::size_t end) {
  const auto space = [&](std::size_t i) { return std::isspace(static_cast<unsigned char>(text[i])) != 0; };
  std::size_t b = begin, e = end;
  if (e < text.size() && space(e)) {
    while (e < text.size() && space(e)) ++e;
  } else {
    while (b > 0 && space(b - 1)) --b;
  }
  std::string rest(text.substr(e));
  if (begin < text.size() && std::isupper(static_cast<unsigned char>(text[begin])) && !rest.empty() && b == begin) {
    rest[0] = char(std::toupper(static_cast<unsigned char>(rest[0])));
  }
  return std::string(text.substr(0, b)) + rest;
}

const std::set<std::string> kAuxiliaries = {"is", "are", "was", "were", "can", "could", "should", "would",
                                            "will", "must", "may", "might", "shall", "does", "do", "did"};

// Contracted negations and what they become without "not".
const std::map<std::string, std::string> kNegatedForms = {
    {"isn't", "is"},       {"aren't", "are"},   {"wasn't", "was"},       {"weren't", "were"},
    {"can't", "can"},      {"cannot", "can"},   {"couldn't", "could"},   {"shouldn't", "should"},
    {"wouldn't", "would"}, {"won't", "will"},   {"mustn't", "must"},     {"mightn't", "might"},
    {"doesn't", "does"},   {"don't", "do"},     {"didn't", "did"},       {"hasn't", "has"},
    {"haven't", "have"},   {"hadn't", "had"},   {"needn't", "need"},     {"shan't", "shall"}};

// Relational verbs whose everyday antonym WordNet lacks or ranks below an unrelated sense
// ("promote" -> "demote"): this table is consulted before WordNet.
const std::map<std::string, std::string> kRelationalVerbs = {
    {"support", "oppose"},   {"oppose", "support"},     {"help", "harm"},        {"harm", "help"},
    {"benefit", "harm"},     {"hurt", "help"},          {"improve", "worsen"},   {"worsen", "improve"},
    {"promote", "hinder"},   {"hinder", "promote"},     {"encourage", "discourage"},
    {"discourage", "encourage"}, {"strengthen", "weaken"}, {"weaken", "strengthen"},
    {"increase", "decrease"}, {"decrease", "increase"}, {"reduce", "increase"},  {"raise", "lower"},    {"lower", "raise"},
    {"protect", "endanger"}, {"endanger", "protect"},   {"enable", "prevent"},   {"prevent", "enable"},
    {"allow", "forbid"},     {"forbid", "allow"},       {"accept", "reject"},    {"reject", "accept"},
    {"create", "destroy"},   {"destroy", "create"},     {"violate", "respect"},  {"respect", "violate"},
    {"boost", "undermine"},  {"undermine", "boost"}};

// Verbs whose WordNet antonyms are about another sense than a claim's ("have" -> "lack" is fine,
// but "be", "do" and "make" swaps produce nonsense) or that act as auxiliaries.
const std::set<std::string> kUnswappableVerbs = {"be", "have", "do", "make", "get", "go", "come", "take", "give",
                                                  "say", "let", "put", "set", "see", "know", "use", "need",
                                                  "can", "will", "may", "must", "shall", "should", "would"};

// Adjective-like words whose antonym changes an amount or an order, not the claim's polarity.
const std::set<std::string> kUnswappableAdjectives = {
    "all", "some", "many", "much", "few", "little", "same", "other", "first", "last", "own", "such", "only",
    "one", "most", "least", "several", "any", "no", "every", "each", "very", "well", "more", "less", "new", "old",
    // particles WordNet also lists as adjectives ("on" -> "off")
    "on", "off", "in", "out", "up", "down", "over", "under", "above", "below", "before", "after", "back"};

const std::map<std::string, std::string> kConnectives = {
    {"but", "and"}, {"although", "because"}, {"though", "because"}, {"because", "although"},
    {"however", "therefore"}, {"therefore", "however"}, {"yet", "and"}};

bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// One vowel group, ending consonant-vowel-consonant ("ban", "stop"): the final consonant doubles.
bool doubles_final_consonant(const std::string& w) {
  if (w.size() < 3) return false;
  const char last = w.back(), mid = w[w.size() - 2], before = w[w.size() - 3];
  if (is_vowel(last) || last == 'w' || last == 'x' || last == 'y' || !is_vowel(mid) || is_vowel(before)) return false;
  int groups = 0;
  for (std::size_t i = 0; i < w.size(); ++i) groups += is_vowel(w[i]) && (i == 0 || !is_vowel(w[i - 1]));
  return groups == 1;
}

std::string third_person(const std::string& v) {
  const auto ends = [&](const char* s) { return v.size() >= std::char_traits<char>::length(s) &&
                                             v.compare(v.size() - std::char_traits<char>::length(s), std::string::npos, s) == 0; };
  if (ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh") || ends("o")) return v + "es";
  if (v.size() > 1 && v.back() == 'y' && !is_vowel(v[v.size() - 2])) return v.substr(0, v.size() - 1) + "ies";
  return v + "s";
}

std::string past(const std::string& v) {
  if (v.back() == 'e') return v + "d";
  if (v.size() > 1 && v.back() == 'y' && !is_vowel(v[v.size() - 2])) return v.substr(0, v.size() - 1) + "ied";
  if (doubles_final_consonant(v)) return v + v.back() + "ed";
  return v + "ed";
}

std::string gerund(const std::string& v) {
  if (v.size() > 2 && v.compare(v.size() - 2, 2, "ie") == 0) return v.substr(0, v.size() - 2) + "ying";
  if (v.size() > 2 && v.back() == 'e' && v[v.size() - 2] != 'e') return v.substr(0, v.size() - 1) + "ing";
  if (doubles_final_consonant(v)) return v + v.back() + "ing";
  return v + "ing";
}

// Verbs with an irregular past or participle ("lose" -> "lost"): those WordNet's exception list
// verb.exc ("lost lose" per line) gives a form the spelling rules above do not produce. It also
// lists regular forms its own morphology cannot undo ("denied deny"); those are not irregular.
const std::set<std::string>& irregular_verbs() {
  static const std::set<std::string> verbs = [] {
    std::set<std::string> lemmas;
    std::istringstream lines(read_file(wordnet_directory() + "/verb.exc"));
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string form, lemma;
      if (!(fields >> form)) continue;
      while (fields >> lemma) {
        if (form != past(lemma) && form != gerund(lemma) && form != third_person(lemma)) lemmas.insert(lemma);
      }
    }
    return lemmas;
  }();
  return verbs;
}

// `antonym` in the inflection `word` has relative to `lemma`, checked against WordNet's
// morphology (an irregular form it cannot confirm is refused rather than guessed). Lock held.
std::optional<std::string> inflect_like_locked(const std::string& word, const std::string& lemma,
                                               const std::string& antonym) {
  if (word == lemma) return antonym;
  std::string form;
  if (word.size() > 3 && word.compare(word.size() - 3, 3, "ing") == 0) form = gerund(antonym);
  else if (word.back() == 's') form = third_person(antonym);
  else if (irregular_verbs().count(antonym)) return std::nullopt;  // "found" -> "lost", not "losed"
  else form = past(antonym);  // the word is a past ("supported", or irregular: "forbade" -> "allowed")
  const auto confirmed = lemmas_locked(form, VERB);
  if (std::find(confirmed.begin(), confirmed.end(), antonym) == confirmed.end()) return std::nullopt;
  return form;
}

struct Edit {
  std::string text, before, after;
};

std::optional<Edit> remove_negation(std::string_view text, const std::vector<Token>& tokens) {
  for (const Token& t : tokens) {
    if (t.lower == "not" || t.lower == "never") {
      return Edit{remove_word(text, t.begin, t.end), std::string(text.substr(t.begin, t.end - t.begin)), ""};
    }
    if (auto it = kNegatedForms.find(t.lower); it != kNegatedForms.end()) {
      const std::string with = capitalize_like(it->second, t.capitalized);
      return Edit{splice(text, t.begin, t.end, with), std::string(text.substr(t.begin, t.end - t.begin)), with};
    }
  }
  return std::nullopt;
}

std::optional<Edit> add_negation(std::string_view text, const std::vector<Token>& tokens) {
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {  // an auxiliary with a word after it
    const Token& t = tokens[i];
    // "do", "does" and "did" in a claim without "not" are mostly main verbs ("did more to ...").
    if (!kAuxiliaries.count(t.lower) || t.lower == "do" || t.lower == "does" || t.lower == "did") continue;
    // Punctuation right after the auxiliary ("is," / "can?") means it does not govern a verb here.
    if (t.end < text.size() && !std::isspace(static_cast<unsigned char>(text[t.end]))) continue;
    if (t.lower == "can") {
      return Edit{splice(text, t.begin, t.end, capitalize_like("cannot", t.capitalized)),
                  std::string(text.substr(t.begin, t.end - t.begin)), capitalize_like("cannot", t.capitalized)};
    }
    return Edit{splice(text, t.end, t.end, " not"), "", "not"};
  }
  return std::nullopt;
}

std::optional<Edit> swap_verb(std::string_view text, const std::vector<Token>& tokens) {
  std::lock_guard<std::mutex> lock(wordnet_mutex());
  open_wordnet_locked();
  for (const Token& t : tokens) {
    // WordNet refuses search terms longer than its buffers (and says so on stderr).
    if (t.lower.size() > 40 || t.lower.find('\'') != std::string::npos || kAuxiliaries.count(t.lower)) continue;
    const auto verb_lemmas = lemmas_locked(t.lower, VERB);
    if (verb_lemmas.empty()) continue;
    // Beyond the table, only words that cannot be read as a noun or an adjective: WordNet's
    // verb antonyms of "right", "credit" or "box" turn "rights" into "wrongs".
    const bool only_a_verb = lemmas_locked(t.lower, NOUN).empty() && lemmas_locked(t.lower, ADJ).empty();
    for (const std::string& lemma : verb_lemmas) {
      if (kUnswappableVerbs.count(lemma)) break;
      std::vector<std::string> candidates;
      if (auto it = kRelationalVerbs.find(lemma); it != kRelationalVerbs.end()) candidates.push_back(it->second);
      if (only_a_verb) {
        for (auto& a : antonyms_locked(lemma, VERB))
          if (a.find(' ') == std::string::npos) candidates.push_back(std::move(a));
      }
      for (const std::string& antonym : candidates) {
        if (auto form = inflect_like_locked(t.lower, lemma, antonym)) {
          const std::string with = capitalize_like(*form, t.capitalized);
          return Edit{splice(text, t.begin, t.end, with), std::string(text.substr(t.begin, t.end - t.begin)), with};
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<Edit> swap_adjective(std::string_view text, const std::vector<Token>& tokens) {
  std::lock_guard<std::mutex> lock(wordnet_mutex());
  open_wordnet_locked();
  // With an auxiliary or copula, only the predicate after it: the claim's polarity sits there
  // ("Affirmative action is good"), while an adjective of the subject is part of its substance.
  std::size_t start = 0;
  while (start < tokens.size() && !kAuxiliaries.count(tokens[start].lower)) ++start;
  start = start == tokens.size() ? 0 : start + 1;
  for (std::size_t i = start; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    // Capitalised words after the first are names ("Green Party"), not adjectives to swap.
    if ((i > 0 && t.capitalized) || t.lower.size() > 40 || kUnswappableAdjectives.count(t.lower)) continue;
    const auto antonyms = antonyms_locked(t.lower, ADJ);
    if (antonyms.empty()) continue;
    // A participle ("made", "tempted") is a verb form, and its "un-" antonym is rarely English.
    const auto verb_lemmas = lemmas_locked(t.lower, VERB);
    if (std::any_of(verb_lemmas.begin(), verb_lemmas.end(), [&](const std::string& l) { return l != t.lower; })) continue;
    // A text that already names an antonym ("local and national") contrasts the two on purpose.
    if (std::any_of(tokens.begin(), tokens.end(), [&](const Token& o) {
          return std::find(antonyms.begin(), antonyms.end(), o.lower) != antonyms.end();
        })) {
      continue;
    }
    for (const std::string& antonym : antonyms) {
      // "non-" antonyms name another class ("political" -> "nonpolitical"), not the opposite judgement.
      if (antonym.find(' ') != std::string::npos || antonym.rfind("non", 0) == 0) continue;
      // A verb whose antonym is "un" + itself is a participle in use ("should be cut" -> "uncut").
      if (!verb_lemmas.empty() && antonym == "un" + t.lower) continue;
      const std::string with = capitalize_like(antonym, t.capitalized);
      return Edit{splice(text, t.begin, t.end, with), std::string(text.substr(t.begin, t.end - t.begin)), with};
    }
  }
  return std::nullopt;
}

std::optional<Edit> swap_connective(std::string_view text, const std::vector<Token>& tokens) {
  for (const Token& t : tokens) {
    if (auto it = kConnectives.find(t.lower); it != kConnectives.end()) {
      const std::string with = capitalize_like(it->second, t.capitalized);
      return Edit{splice(text, t.begin, t.end, with), std::string(text.substr(t.begin, t.end - t.begin)), with};
    }
  }
  return std::nullopt;
}

// "<det> N{1,3} is V-ing <det> N{1,3}" and nothing else but a final full stop: the one shape in
// which subject and object are certain without a parser. Singular determiners only, so "is"
// still agrees after the swap.
std::optional<Edit> swap_roles(std::string_view text, const std::vector<Token>& tokens) {
  static const std::set<std::string> determiners = {"a", "an", "the"};
  // A preposition inside a noun phrase ("a girl in pink", "a guitar on stage") attaches somewhere
  // a word-level pattern cannot tell.
  static const std::set<std::string> prepositions = {
      "in", "on", "at", "with", "by", "for", "from", "of", "to", "into", "onto", "under", "over", "near", "behind",
      "through", "across", "along", "around", "beside", "between", "inside", "outside", "without", "down", "up",
      "off", "and", "or", "while", "who", "that", "which"};
  const auto plain = [&](const Token& t) {
    return std::all_of(t.lower.begin(), t.lower.end(), [](unsigned char c) { return std::isalpha(c); });
  };
  std::size_t aux = 0;
  while (aux < tokens.size() && tokens[aux].lower != "is") ++aux;
  if (aux < 2 || aux + 3 >= tokens.size() || aux > 4) return std::nullopt;
  const Token& verb = tokens[aux + 1];
  if (verb.lower.size() < 5 || verb.lower.compare(verb.lower.size() - 3, 3, "ing") != 0) return std::nullopt;
  const std::size_t object = aux + 2;
  if (!determiners.count(tokens[0].lower) || !determiners.count(tokens[object].lower)) return std::nullopt;
  if (tokens.size() - object - 1 > 3) return std::nullopt;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!plain(tokens[i])) return std::nullopt;
    const bool is_slot = i == 0 || i == aux || i == aux + 1 || i == object;
    if (!is_slot && (determiners.count(tokens[i].lower) || kAuxiliaries.count(tokens[i].lower) ||
                     prepositions.count(tokens[i].lower))) {
      return std::nullopt;
    }
  }
  // Only spaces between the words, and at most a full stop after the last one.
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (text.substr(tokens[i].end, tokens[i + 1].begin - tokens[i].end) != " ") return std::nullopt;
  }
  if (tokens.front().begin != 0) return std::nullopt;
  const std::string_view tail = text.substr(tokens.back().end);
  if (!(tail.empty() || tail == ".")) return std::nullopt;

  const std::string subject(text.substr(tokens[0].begin, tokens[aux - 1].end - tokens[0].begin));
  const std::string object_phrase(text.substr(tokens[object].begin, tokens.back().end - tokens[object].begin));
  const std::string middle(text.substr(tokens[aux - 1].end, tokens[object].begin - tokens[aux - 1].end));
  std::string new_subject = object_phrase, new_object = subject;
  new_subject[0] = char(std::toupper(static_cast<unsigned char>(new_subject[0])));
  if (tokens[0].capitalized) new_object[0] = char(std::tolower(static_cast<unsigned char>(new_object[0])));
  return Edit{new_subject + middle + new_object + std::string(tail), subject + "|" + object_phrase,
              new_subject + "|" + new_object};
}

}  // namespace

std::string to_string(EditKind kind) {
  switch (kind) {
    case EditKind::kNegationRemoved: return "negation-removed";
    case EditKind::kVerbAntonym: return "verb-antonym";
    case EditKind::kAdjectiveAntonym: return "adjective-antonym";
    case EditKind::kNegationAdded: return "negation-added";
    case EditKind::kConnectiveSwap: return "connective-swap";
    case EditKind::kRoleSwap: return "role-swap";
  }
  return "unknown";
}

const std::vector<EditKind>& all_edit_kinds() {
  static const std::vector<EditKind> kinds = {EditKind::kNegationRemoved, EditKind::kVerbAntonym,
                                              EditKind::kAdjectiveAntonym, EditKind::kNegationAdded,
                                              EditKind::kConnectiveSwap, EditKind::kRoleSwap};
  return kinds;
}

const std::vector<EditKind>& stance_edit_kinds() {
  static const std::vector<EditKind> kinds = {EditKind::kNegationRemoved, EditKind::kVerbAntonym,
                                              EditKind::kAdjectiveAntonym, EditKind::kNegationAdded,
                                              EditKind::kConnectiveSwap};
  return kinds;
}

const std::vector<EditKind>& near_miss_edit_kinds() {
  static const std::vector<EditKind> kinds = {EditKind::kRoleSwap, EditKind::kNegationRemoved,
                                              EditKind::kAdjectiveAntonym, EditKind::kVerbAntonym,
                                              EditKind::kNegationAdded};
  return kinds;
}

EditKind parse_edit_kind(const std::string& name) {
  std::string valid;
  for (EditKind kind : all_edit_kinds()) {
    if (to_string(kind) == name) return kind;
    valid += (valid.empty() ? "" : ", ") + to_string(kind);
  }
  throw InvalidArgument("unknown edit kind '" + name + "' (expected one of " + valid + ")");
}

Inverter::Inverter(InverterOptions options) : options_(std::move(options)) {
  if (options_.edits.empty()) throw InvalidArgument("InverterOptions.edits is empty: no edit could apply");
  std::lock_guard<std::mutex> lock(wordnet_mutex());
  open_wordnet_locked();  // a missing database is reported here, not at the first antonym look-up
}

std::optional<Inversion> Inverter::invert(std::string_view text) const {
  require_valid_utf8(text, "Inverter::invert");
  const std::vector<Token> tokens = tokenize(text);
  if (tokens.empty()) return std::nullopt;
  for (EditKind kind : options_.edits) {
    std::optional<Edit> edit;
    switch (kind) {
      case EditKind::kNegationRemoved: edit = remove_negation(text, tokens); break;
      case EditKind::kVerbAntonym: edit = swap_verb(text, tokens); break;
      case EditKind::kAdjectiveAntonym: edit = swap_adjective(text, tokens); break;
      case EditKind::kNegationAdded: edit = add_negation(text, tokens); break;
      case EditKind::kConnectiveSwap: edit = swap_connective(text, tokens); break;
      case EditKind::kRoleSwap: edit = swap_roles(text, tokens); break;
    }
    if (edit) return Inversion{std::move(edit->text), kind, std::move(edit->before), std::move(edit->after)};
  }
  return std::nullopt;
}

std::vector<std::optional<Inversion>> Inverter::invert(const std::vector<std::string>& texts) const {
  std::vector<std::optional<Inversion>> out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(invert(t));
  return out;
}

std::vector<std::string> wordnet_antonyms(const std::string& lemma, const std::string& part_of_speech) {
  const int pos = wordnet_pos(part_of_speech);
  std::lock_guard<std::mutex> lock(wordnet_mutex());
  open_wordnet_locked();
  return antonyms_locked(lemma, pos);
}

}  // namespace counterpoint::text
