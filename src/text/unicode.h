// src/text/unicode.h: the UTF-8 and Unicode helpers the tokenizers share, on top of utf8proc
// (private to the text layer).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <utf8proc.h>

namespace counterpoint::text {

// InvalidArgument "<what>: invalid UTF-8 at byte offset N" for the first bad sequence
// (overlong forms, surrogates and code points above U+10FFFF included).
void require_valid_utf8(std::string_view text, std::string_view what);

// utf8proc_map over exactly `text` (embedded NULs kept); `options` e.g. UTF8PROC_COMPOSE.
std::string normalize(std::string_view text, utf8proc_option_t options);
inline std::string nfc(std::string_view t) { return normalize(t, utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE)); }
inline std::string nfd(std::string_view t) { return normalize(t, utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE)); }
inline std::string nfkc(std::string_view t) {
  return normalize(t, utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
}

// Decodes one code point of valid UTF-8 at text[pos], advancing pos.
inline char32_t next_code_point(std::string_view text, std::size_t& pos) {
  utf8proc_int32_t cp = 0;
  auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                            static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
  pos += n > 0 ? static_cast<std::size_t>(n) : 1;
  return static_cast<char32_t>(cp);
}
std::u32string decode(std::string_view valid_utf8);
void append_utf8(std::string& out, char32_t cp);
bool is_ascii(std::string_view text);

inline utf8proc_category_t category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

}  // namespace counterpoint::text
