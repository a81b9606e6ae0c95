// counterpoint/core/spelling.h: names typed by a user (subcommands, model names, enum values)
// compared the way a user means them: ASCII case folded, and a near miss answered with the
// nearest valid name ("did you mean 'search'?"). The one edit distance of the library.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace counterpoint {

// `text` with ASCII letters in lower case (other bytes unchanged).
std::string ascii_lower(std::string_view text);

// Levenshtein distance (insertions, deletions, substitutions, and a swap of two adjacent
// characters counting as one edit) between `a` and `b`, ASCII case ignored.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name of `choices` nearest to `typed`, when it is near enough to be a typo: at most
// max(1, length / 3) edits away (2 for "serach" -> "search"), ties going to the earlier choice.
std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& choices);

// "; did you mean 'x'?" for the nearest name, or "" when none is near.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& choices);

}  // namespace counterpoint
