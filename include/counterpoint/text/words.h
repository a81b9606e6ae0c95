// counterpoint/text/words.h: cutting a text into words, below the model tokenizers, and the
// blanks around a text. Three word behaviours, because their callers really need different ones:
// BM25 and the stance reader match lower-cased Unicode letter/digit runs, the near-miss builder
// measures overlap of ASCII English words (keeping "dog's" whole), and word ablation deletes
// exactly what a reader sees as a word.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace counterpoint::text {

// Lower-cased runs of Unicode letters and digits (categories L* and N*), in text order; every
// other character separates. Throws InvalidArgument on invalid UTF-8, naming the byte offset.
std::vector<std::string> alphanumeric_words(std::string_view text);

// The distinct lower-cased ASCII words: letters and digits, and an apostrophe once a word has
// begun ("dog's"; a closing quote stays too: "'bone'" -> "bone'"); every other byte, non-ASCII
// included, separates.
std::set<std::string> distinct_ascii_words(std::string_view text);

// Runs of non-whitespace (space, \t, \n, \v, \f, \r separate), exactly as written: punctuation
// stays attached to its word.
std::vector<std::string> whitespace_words(std::string_view text);

// `text` without the blanks around it: ASCII whitespace, NUL, and Unicode's no-break (U+00A0) and
// ideographic (U+3000) spaces, which pasted text carries.
std::string trim_blanks(std::string_view text);

}  // namespace counterpoint::text
