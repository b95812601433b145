// See name_suggestion.h.
#include "common/name_suggestion.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace tuneplane {
namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

}  // namespace

std::size_t editDistance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: the swap of two neighbours looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::optional<std::string> closestName(std::string_view name,
                                       const std::vector<std::string>& names) {
  const std::size_t limit = std::max<std::size_t>(1, name.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const std::string& candidate : names) {
    const std::size_t d = editDistance(name, candidate);
    // Every character different is a different name, not a slip ("x" is not "y").
    if (d < best_distance && d < std::max(name.size(), candidate.size())) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string withSuggestion(const std::string& message, std::string_view name,
                           const std::vector<std::string>& names) {
  if (names.empty()) return message + "; this site has none";
  std::string listed;
  for (std::size_t i = 0; i < names.size() && i < kListedNames; ++i) {
    listed += (i == 0 ? "" : ", ") + names[i];
  }
  if (names.size() > kListedNames)
    listed += fmt::format(" and {} more", names.size() - kListedNames);
  std::string out = message + "; this site has: " + listed;
  if (const auto close = closestName(name, names)) out += "; did you mean '" + *close + "'?";
  return out;
}

}  // namespace tuneplane
