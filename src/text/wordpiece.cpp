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

bool is_cased(char32_t cp) {
  auto c = category(cp);
  if (c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT) return true;
  auto i = static_cast<utf8proc_int32_t>(cp);
  return utf8proc_tolower(i) != i || utf8proc_toupper(i) != i;
}

bool is_case_ignorable(char32_t cp) {
  switch (cp) {
    case 0x27: case 0x2E: case 0x3A: case 0x5E: case 0x60: case 0xB7: case 0x387: case 0x5F4:
    case 0x2018: case 0x2019: case 0x2024: case 0x2027: case 0xFE13: case 0xFE52: case 0xFE55:
    case 0xFF07: case 0xFF0E: case 0xFF1A:
      return true;
    default:
      break;
  }
  auto c = category(cp);
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_ME || c == UTF8PROC_CATEGORY_CF ||
         c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_SK;
}

// Python's str.lower(): full lower-casing, with capital sigma becoming final sigma at the end
// of a word (Unicode's Final_Sigma condition).
std::string python_lower(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  if (text::is_ascii(token)) {
    for (char c : token) out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
    return out;
  }
  std::u32string cps = text::decode(token);
  for (std::size_t i = 0; i < cps.size(); ++i) {
    char32_t cp = cps[i];
    if (cp == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE -> i + COMBINING DOT ABOVE
      text::append_utf8(out, 'i');
      text::append_utf8(out, 0x307);
    } else if (cp == 0x3A3) {
      std::size_t j = i;
      while (j > 0 && is_case_ignorable(cps[j - 1])) --j;
      bool final_sigma = j > 0 && is_cased(cps[j - 1]);
      if (final_sigma) {
        std::size_t k = i + 1;
        while (k < cps.size() && is_case_ignorable(cps[k])) ++k;
        final_sigma = k == cps.size() || !is_cased(cps[k]);
      }
      text::append_utf8(out, final_sigma ? 0x3C2 : 0x3C3);
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

const char* const kSpecialPieces[] = {"[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]"};

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> pieces, bool lowercase,
                                       const std::string& source)
    : pieces_(std::move(pieces)), lowercase_(lowercase) {
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
  auto require = [&](const char* piece) {
    int64_t id = piece_id(piece);
    if (id < 0) {
      throw CorruptFile(source + ": missing special token " + piece +
                        " (a WordPiece vocabulary needs [CLS], [SEP], [UNK] and [PAD])");
    }
    return id;
  };
  cls_id_ = require("[CLS]");
  sep_id_ = require("[SEP]");
  unk_id_ = require("[UNK]");
  pad_id_ = require("[PAD]");
  for (const char* piece : kSpecialPieces) {
    if (int64_t id = piece_id(piece); id >= 0) special_ids_.push_back(id);
  }
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& vocab_path, bool lowercase) {
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
  return WordPieceTokenizer(std::move(pieces), lowercase, vocab_path);
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

std::vector<WordPieceTokenizer::Token> WordPieceTokenizer::tokenize_ids(std::string_view text) const {
  std::vector<Token> out;
  std::size_t segment_start = 0;
  std::size_t pos = 0;
  while ((pos = text.find('[', pos)) != std::string_view::npos) {
    bool matched = false;
    for (int64_t id : special_ids_) {
      const std::string& piece = pieces_[static_cast<std::size_t>(id)];
      if (text.compare(pos, piece.size(), piece) == 0) {
        split_basic(text.substr(segment_start, pos - segment_start), out);
        out.push_back(token_of(id));
        pos += piece.size();
        segment_start = pos;
        matched = true;
        break;
      }
    }
    if (!matched) ++pos;
  }
  split_basic(text.substr(segment_start), out);
  return out;
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

  // Whitespace split, then per word: lower-casing/accents and punctuation split.
  std::string current;
  auto flush_word = [&](std::string& word) {
    if (!word.empty()) append_wordpieces(word, out);
    word.clear();
  };
  auto process_token = [&](std::string_view token) {
    std::string word = lowercase_ ? strip_accents(python_lower(token)) : std::string(token);
    std::size_t p = 0;
    current.clear();
    while (p < word.size()) {
      std::size_t start = p;
      char32_t cp = static_cast<unsigned char>(word[p]) < 0x80 ? static_cast<unsigned char>(word[p++])
                                                              : text::next_code_point(word, p);
      if (is_punctuation(cp)) {
        flush_word(current);
        std::string punct = word.substr(start, p - start);
        append_wordpieces(punct, out);
      } else {
        current.append(word, start, p - start);
      }
    }
    flush_word(current);
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
  if (max_length != 0 && max_length < 3) {
    throw InvalidArgument("max_length " + std::to_string(max_length) +
                          " leaves no room for [CLS], [SEP], [SEP] (at least 3, or 0 for no limit)");
  }
  std::vector<Token> first = tokenize_ids(a);
  std::vector<Token> second = tokenize_ids(b);
  Encoding e;
  if (max_length != 0 && first.size() + second.size() > max_length - 3) {
    std::size_t budget = max_length - 3;
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
  for (const Token& t : second) push(t, 1);
  push(token_of(sep_id_), 1);
  return e;
}

}  // namespace counterpoint
