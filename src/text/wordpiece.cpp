#include "counterpoint/text/wordpiece.h"

#include <algorithm>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "unicode.h"

namespace counterpoint {
namespace {

using text::category;

bool is_cjk(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// BasicTokenizer._is_control: every C* category except tab, newline and carriage return.
bool is_control(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
      return true;
    default:
      return false;
  }
}

// BasicTokenizer._is_whitespace.
bool is_bert_whitespace(char32_t cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || category(cp) == UTF8PROC_CATEGORY_ZS;
}

// Python's str.isspace(), which whitespace_tokenize's str.split() uses.
bool is_python_space(char32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= '\t' && cp <= '\r') || (cp >= 0x1C && cp <= 0x1F);
  auto c = category(cp);
  if (c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP) return true;
  auto bidi = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->bidi_class;
  return bidi == UTF8PROC_BIDI_CLASS_WS || bidi == UTF8PROC_BIDI_CLASS_B || bidi == UTF8PROC_BIDI_CLASS_S;
}

// BasicTokenizer._is_punctuation: ASCII symbols count as punctuation too.
bool is_punctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
    return true;
  }
  if (cp < 0x80) return false;
  auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

// Lower-casing as Hugging Face's tokenizers do it (the fast tokenizer sentence-transformers runs):
// each code point's full lower case on its own, so a capital sigma is always σ. Python's
// str.lower() would make a word-final one ς (Unicode's Final_Sigma), which neither the fast nor
// transformers' slow BertTokenizer gives (checked with tokenizers 0.19.1 / transformers 4.40.2).
std::string lower_case(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  if (text::is_ascii(token)) {
    for (char c : token) out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
    return out;
  }
  for (char32_t cp : text::decode(token)) {
    if (cp == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE -> i + COMBINING DOT ABOVE
      text::append_utf8(out, 'i');
      text::append_utf8(out, 0x307);
    } else {
      text::append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    }
  }
  return out;
}

// BasicTokenizer._run_strip_accents: NFD, then combining marks (Mn) removed.
std::string strip_accents(const std::string& token) {
  if (text::is_ascii(token)) return token;
  std::string decomposed = text::nfd(token);
  std::string out;
  out.reserve(decomposed.size());
  std::size_t pos = 0;
  while (pos < decomposed.size()) {
    std::size_t start = pos;
    char32_t cp = text::next_code_point(decomposed, pos);
    if (category(cp) != UTF8PROC_CATEGORY_MN) out.append(decomposed, start, pos - start);
  }
  return out;
}

// The pieces BERT's tokenizer keeps whole in a text (its added tokens), when the vocabulary holds them.
const char* const kBertLiterals[] = {"[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]"};

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> pieces, bool lowercase,
                                       const std::string& source, const SpecialTokens& specials)
    : pieces_(std::move(pieces)), lowercase_(lowercase), pair_separators_(specials.pair_separators) {
  ids_.reserve(pieces_.size());
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    if (pieces_[i].empty()) {
      throw CorruptFile(source + ": piece " + std::to_string(i) + " is empty");
    }
    auto [it, inserted] = ids_.emplace(pieces_[i], static_cast<int64_t>(i));
    if (!inserted) {
      throw CorruptFile(source + ": duplicate piece \"" + pieces_[i] + "\" with ids " +
                        std::to_string(it->second) + " and " + std::to_string(i));
    }
  }
  const bool bert = specials.is_bert();
  auto require = [&](const std::string& piece, const char* role) {
    int64_t id = piece_id(piece);
    if (id < 0) {
      throw CorruptFile(source + ": missing special token " + piece +
                        (bert ? std::string(" (a WordPiece vocabulary needs [CLS], [SEP], [UNK] and [PAD])")
                              : " (the model's " + std::string(role) + " token, as its manifest names it)"));
    }
    return id;
  };
  cls_id_ = require(specials.cls, "cls");
  sep_id_ = require(specials.sep, "sep");
  unk_id_ = require(specials.unk, "unknown");
  pad_id_ = require(specials.pad, "padding");
  if (pair_separators_ < 1 || pair_separators_ > 2) {
    throw CorruptFile(source + ": " + std::to_string(pair_separators_) +
                      " separators between a pair's segments (1 as BERT, or 2 as MPNet)");
  }
  std::vector<SpecialTokens::Literal> literals = specials.literals;
  if (bert) {
    // Vocabularies written before the manifest named its specials may lack [MASK]: BERT keeps
    // whole those it holds.
    for (const char* piece : kBertLiterals) {
      if (piece_id(piece) >= 0) literals.push_back({piece, false});
    }
  } else if (!specials.mask.empty()) {
    require(specials.mask, "mask");
  }
  for (const auto& literal : literals) {
    literals_.push_back({require(literal.piece, "added"), literal.normalized});
  }
  // Hugging Face matches added tokens leftmost-longest: at one position the longest wins.
  std::stable_sort(literals_.begin(), literals_.end(), [&](const Literal& a, const Literal& b) {
    return pieces_[std::size_t(a.id)].size() > pieces_[std::size_t(b.id)].size();
  });
  for (const Literal& l : literals_) {
    first_bytes_[l.normalized][static_cast<unsigned char>(pieces_[std::size_t(l.id)][0])] = true;
  }
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& vocab_path, bool lowercase,
                                                 const SpecialTokens& specials) {
  std::string bytes = read_file(vocab_path);
  try {
    text::require_valid_utf8(bytes, vocab_path);
  } catch (const InvalidArgument& e) {
    throw CorruptFile(e.what());
  }
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start < bytes.size()) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string::npos) end = bytes.size();
    std::string piece = bytes.substr(start, end - start);
    if (!piece.empty() && piece.back() == '\r') piece.pop_back();
    if (piece.empty()) {
      throw CorruptFile(vocab_path + ": line " + std::to_string(pieces.size() + 1) +
                        " is empty (one piece per line expected)");
    }
    pieces.push_back(std::move(piece));
    start = end + 1;
  }
  if (pieces.empty()) throw CorruptFile(vocab_path + ": the vocabulary is empty");
  return WordPieceTokenizer(std::move(pieces), lowercase, vocab_path, specials);
}

int64_t WordPieceTokenizer::piece_id(const std::string& piece) const {
  auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  text::require_valid_utf8(text, "text");
  std::vector<std::string> out;
  for (const Token& t : tokenize_ids(text)) out.push_back(*t.piece);
  return out;
}

const WordPieceTokenizer::Literal* WordPieceTokenizer::literal_at(std::string_view text, std::size_t pos,
                                                                bool normalized) const {
  if (!first_bytes_[normalized][static_cast<unsigned char>(text[pos])]) return nullptr;
  for (const Literal& l : literals_) {
    if (l.normalized == normalized && text.compare(pos, pieces_[std::size_t(l.id)].size(), pieces_[std::size_t(l.id)]) == 0) {
      return &l;
    }
  }
  return nullptr;
}

std::vector<WordPieceTokenizer::Token> WordPieceTokenizer::tokenize_ids(std::string_view text) const {
  // Raw literals are found in the raw text first; what lies between is normalised and split.
  std::vector<Token> out;
  std::size_t segment_start = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const Literal* literal = literal_at(text, pos, false);
    if (literal == nullptr) {
      ++pos;
      continue;
    }
    split_basic(text.substr(segment_start, pos - segment_start), out);
    out.push_back(token_of(literal->id));
    pos += pieces_[std::size_t(literal->id)].size();
    segment_start = pos;
  }
  split_basic(text.substr(segment_start), out);
  return out;
}

void WordPieceTokenizer::split_punctuation(const std::string& word, std::size_t begin, std::size_t end,
                                           std::vector<Token>& out) const {
  std::string current;
  std::size_t p = begin;
  while (p < end) {
    std::size_t start = p;
    char32_t cp = static_cast<unsigned char>(word[p]) < 0x80 ? static_cast<unsigned char>(word[p++])
                                                            : text::next_code_point(word, p);
    if (is_punctuation(cp)) {
      if (!current.empty()) append_wordpieces(current, out);
      current.clear();
      std::string punct = word.substr(start, p - start);
      append_wordpieces(punct, out);
    } else {
      current.append(word, start, p - start);
    }
  }
  if (!current.empty()) append_wordpieces(current, out);
}

void WordPieceTokenizer::split_basic(std::string_view segment, std::vector<Token>& out) const {
  // Cleaning and CJK spacing (BasicTokenizer._clean_text, _tokenize_chinese_chars).
  std::string cleaned;
  cleaned.reserve(segment.size());
  bool ascii = true;
  std::size_t pos = 0;
  while (pos < segment.size()) {
    auto byte = static_cast<unsigned char>(segment[pos]);
    if (byte < 0x80) {
      ++pos;
      if (byte == '\t' || byte == '\n' || byte == '\r' || byte == ' ') {
        cleaned.push_back(' ');
      } else if (byte >= 0x20 && byte != 0x7F) {
        cleaned.push_back(static_cast<char>(byte));
      }
      continue;
    }
    std::size_t start = pos;
    char32_t cp = text::next_code_point(segment, pos);
    if (cp == 0xFFFD || is_control(cp)) continue;
    if (is_bert_whitespace(cp)) {
      cleaned.push_back(' ');
    } else if (is_cjk(cp)) {
      cleaned.push_back(' ');
      cleaned.append(segment, start, pos - start);
      cleaned.push_back(' ');
    } else {
      cleaned.append(segment, start, pos - start);
      ascii = false;
    }
  }
  if (!ascii) cleaned = text::nfc(cleaned);

  // Whitespace split, then per word: lower-casing/accents, normalised literals (found in the
  // normalised text, as Hugging Face does; the converter refuses any that spans whitespace) and
  // punctuation split.
  auto process_token = [&](std::string_view token) {
    std::string word = lowercase_ ? strip_accents(lower_case(token)) : std::string(token);
    std::size_t begin = 0;
    for (std::size_t p = 0; p < word.size();) {
      const Literal* literal = literal_at(word, p, true);
      if (literal == nullptr) {
        ++p;
        continue;
      }
      split_punctuation(word, begin, p, out);
      out.push_back(token_of(literal->id));
      p += pieces_[std::size_t(literal->id)].size();
      begin = p;
    }
    split_punctuation(word, begin, word.size(), out);
  };
  std::size_t token_start = std::string::npos;
  pos = 0;
  while (pos < cleaned.size()) {
    std::size_t start = pos;
    auto byte = static_cast<unsigned char>(cleaned[pos]);
    char32_t cp = byte < 0x80 ? (++pos, byte) : text::next_code_point(cleaned, pos);
    if (is_python_space(cp)) {
      if (token_start != std::string::npos) {
        process_token(std::string_view(cleaned).substr(token_start, start - token_start));
        token_start = std::string::npos;
      }
    } else if (token_start == std::string::npos) {
      token_start = start;
    }
  }
  if (token_start != std::string::npos) process_token(std::string_view(cleaned).substr(token_start));
}

void WordPieceTokenizer::append_wordpieces(const std::string& word, std::vector<Token>& out) const {
  std::vector<std::size_t> bounds;  // byte offset of each code point, then the end
  for (std::size_t pos = 0; pos < word.size();) {
    bounds.push_back(pos);
    if (bounds.size() > kMaxCharsPerWord) {
      out.push_back(token_of(unk_id_));
      return;
    }
    auto byte = static_cast<unsigned char>(word[pos]);
    if (byte < 0x80) ++pos; else text::next_code_point(word, pos);
  }
  const std::size_t n = bounds.size();
  bounds.push_back(word.size());

  const std::size_t first_new = out.size();
  std::string candidate;
  std::size_t start = 0;
  while (start < n) {
    int64_t found = -1;
    std::size_t end = n;
    for (; end > start; --end) {
      candidate.assign(start > 0 ? "##" : "");
      candidate.append(word, bounds[start], bounds[end] - bounds[start]);
      auto it = ids_.find(candidate);
      if (it != ids_.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {
      out.resize(first_new);
      out.push_back(token_of(unk_id_));
      return;
    }
    out.push_back(token_of(found));
    start = end;
  }
}

Encoding WordPieceTokenizer::encode(std::string_view text, std::size_t max_length) const {
  text::require_valid_utf8(text, "text");
  if (max_length != 0 && max_length < 2) {
    throw InvalidArgument("max_length " + std::to_string(max_length) +
                          " leaves no room for [CLS] and [SEP] (at least 2, or 0 for no limit)");
  }
  std::vector<Token> body = tokenize_ids(text);
  Encoding e;
  if (max_length != 0 && body.size() > max_length - 2) {
    body.resize(max_length - 2);
    e.truncated = true;
  }
  e.ids.reserve(body.size() + 2);
  e.pieces.reserve(body.size() + 2);
  auto push = [&](const Token& t) {
    e.ids.push_back(t.id);
    e.pieces.push_back(*t.piece);
  };
  push(token_of(cls_id_));
  for (const Token& t : body) push(t);
  push(token_of(sep_id_));
  e.type_ids.assign(e.ids.size(), 0);
  return e;
}

Encoding WordPieceTokenizer::encode_pair(std::string_view a, std::string_view b,
                                         std::size_t max_length) const {
  text::require_valid_utf8(a, "first text");
  text::require_valid_utf8(b, "second text");
  const std::size_t specials = 2 + pair_separators_;
  if (max_length != 0 && max_length < specials) {
    throw InvalidArgument("max_length " + std::to_string(max_length) + " leaves no room for the " +
                          std::to_string(specials) + " special tokens of a pair (" + pieces_[std::size_t(cls_id_)] +
                          ", " + pieces_[std::size_t(sep_id_)] + " x " + std::to_string(specials - 1) +
                          "; at least " + std::to_string(specials) + ", or 0 for no limit)");
  }
  std::vector<Token> first = tokenize_ids(a);
  std::vector<Token> second = tokenize_ids(b);
  Encoding e;
  if (max_length != 0 && first.size() + second.size() > max_length - specials) {
    std::size_t budget = max_length - specials;
    std::size_t la = first.size(), lb = second.size();
    // Longest first, one token at a time; the second segment gives way on ties.
    if (la > lb) {
      std::size_t cut = std::min(la - lb, la + lb - budget);
      la -= cut;
    } else if (lb > la) {
      std::size_t cut = std::min(lb - la, la + lb - budget);
      lb -= cut;
    }
    if (la + lb > budget) {  // now equal: alternate, starting with the second
      std::size_t remove = la + lb - budget;
      lb -= (remove + 1) / 2;
      la -= remove / 2;
    }
    first.resize(la);
    second.resize(lb);
    e.truncated = true;
  }
  auto push = [&](const Token& t, int64_t type) {
    e.ids.push_back(t.id);
    e.pieces.push_back(*t.piece);
    e.type_ids.push_back(type);
  };
  push(token_of(cls_id_), 0);
  for (const Token& t : first) push(t, 0);
  push(token_of(sep_id_), 0);
  // MPNet's second separator opens the second segment; type ids do not reach its network.
  for (std::size_t i = 1; i < pair_separators_; ++i) push(token_of(sep_id_), 1);
  for (const Token& t : second) push(t, 1);
  push(token_of(sep_id_), 1);
  return e;
}

}  // namespace counterpoint
