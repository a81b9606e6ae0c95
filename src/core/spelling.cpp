#include "counterpoint/core/spelling.h"

#include <algorithm>
#include <cctype>

namespace counterpoint {

std::string ascii_lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::size_t edit_distance(std::string_view a_text, std::string_view b_text) {
  const std::string a = ascii_lower(a_text), b = ascii_lower(b_text);
  // Optimal string alignment: three rows of the dynamic programme.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& choices) {
  const std::size_t allowed = std::max<std::size_t>(1, typed.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& choice : choices) {
    const std::size_t distance = edit_distance(typed, choice);
    if (distance < best_distance) {
      best = choice;
      best_distance = distance;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& choices) {
  const auto nearest = nearest_name(typed, choices);
  return nearest ? "; did you mean '" + *nearest + "'?" : "";
}

}  // namespace counterpoint
