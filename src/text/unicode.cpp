#include "unicode.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "counterpoint/core/errors.h"

namespace counterpoint::text {

void require_valid_utf8(std::string_view text, std::string_view what) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    utf8proc_int32_t cp = 0;
    auto n = utf8proc_iterate(bytes + pos, static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
    if (n <= 0 || cp < 0) {
      // A whole file (a vocabulary) is checked at once: name the line too, so the user can find it.
      std::string where = "byte offset " + std::to_string(pos);
      if (text.find('\n') != std::string_view::npos) {
        const std::string_view before = text.substr(0, pos);
        const std::size_t last_newline = before.rfind('\n');
        const std::size_t line_start = last_newline == std::string_view::npos ? 0 : last_newline + 1;
        const auto line = 1 + std::count(before.begin(), before.end(), '\n');
        where = "line " + std::to_string(line) + ", byte " + std::to_string(pos - line_start + 1) + " of the line (" +
                where + ")";
      }
      throw InvalidArgument(std::string(what) + ": invalid UTF-8 at " + where +
                            " (invalid text is rejected, never repaired)");
    }
    pos += static_cast<std::size_t>(n);
  }
}

std::string normalize(std::string_view text, utf8proc_option_t options) {
  if (text.empty()) return {};
  utf8proc_uint8_t* out = nullptr;
  auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                        static_cast<utf8proc_ssize_t>(text.size()), &out, options);
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  if (n < 0) {
    throw InvalidArgument(std::string("Unicode normalization failed: ") + utf8proc_errmsg(n));
  }
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}

std::u32string decode(std::string_view valid_utf8) {
  std::u32string out;
  out.reserve(valid_utf8.size());
  std::size_t pos = 0;
  while (pos < valid_utf8.size()) {
    auto byte = static_cast<unsigned char>(valid_utf8[pos]);
    if (byte < 0x80) {
      out.push_back(byte);
      ++pos;
    } else {
      out.push_back(next_code_point(valid_utf8, pos));
    }
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
    return;
  }
  utf8proc_uint8_t buf[4];
  auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
}

bool is_ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace counterpoint::text
