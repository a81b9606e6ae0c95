#include "counterpoint/text/words.h"

#include <utf8proc.h>

#include <cctype>

#include "counterpoint/core/errors.h"

namespace counterpoint::text {
namespace {

bool is_alphanumeric(utf8proc_int32_t cp) {
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::vector<std::string> alphanumeric_words(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  std::size_t pos = 0;
  while (pos < text.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t len = utf8proc_iterate(bytes + pos, utf8proc_ssize_t(text.size() - pos), &cp);
    if (len <= 0 || cp < 0) {
      throw InvalidArgument("text is not valid UTF-8 (byte offset " + std::to_string(pos) + ")");
    }
    pos += std::size_t(len);
    if (is_alphanumeric(cp)) {
      utf8proc_uint8_t encoded[4];
      const utf8proc_ssize_t n = utf8proc_encode_char(utf8proc_tolower(cp), encoded);
      current.append(reinterpret_cast<const char*>(encoded), std::size_t(n));
    } else if (!current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

std::set<std::string> distinct_ascii_words(std::string_view text) {
  std::set<std::string> words;
  std::string word;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 128 && (std::isalnum(byte) || (c == '\'' && !word.empty()))) {
      word += static_cast<char>(std::tolower(byte));
    } else if (!word.empty()) {
      words.insert(word);
      word.clear();
    }
  }
  if (!word.empty()) words.insert(word);
  return words;
}

std::vector<std::string> whitespace_words(std::string_view text) {
  std::vector<std::string> words;
  std::size_t pos = 0;
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (pos < text.size()) {
    while (pos < text.size() && is_space(text[pos])) ++pos;
    const std::size_t start = pos;
    while (pos < text.size() && !is_space(text[pos])) ++pos;
    if (pos > start) words.emplace_back(text.substr(start, pos - start));
  }
  return words;
}

std::string trim_blanks(std::string_view text) {
  static const std::string_view kBlanks[] = {" ", "\t", "\r", "\n", "\v", "\f", std::string_view("\0", 1),
                                             "\xC2\xA0", "\xE3\x80\x80"};
  for (bool trimmed = true; trimmed;) {
    trimmed = false;
    for (const auto blank : kBlanks) {
      if (text.size() >= blank.size() && text.substr(0, blank.size()) == blank) {
        text.remove_prefix(blank.size());
        trimmed = true;
      }
      if (text.size() >= blank.size() && text.substr(text.size() - blank.size()) == blank) {
        text.remove_suffix(blank.size());
        trimmed = true;
      }
    }
  }
  return std::string(text);
}

}  // namespace counterpoint::text
