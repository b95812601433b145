// What an error about an unknown name says so that the user need not guess: the names that
// exist, and the closest one when it is close enough to be a slip of the keyboard ("did you
// mean"). Closeness is the optimal-string-alignment edit distance (insert, delete, replace,
// swap two neighbours: one edit each), with case ignored. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane {

// Edits that turn `a` into `b` (case-insensitive, ASCII).
std::size_t editDistance(std::string_view a, std::string_view b);

// The one of `names` closest to `name`, when it is within a third of `name`'s length (at
// least one edit) and not every character differs; the first listed wins a tie. nullopt when
// none is that close.
std::optional<std::string> closestName(std::string_view name,
                                       const std::vector<std::string>& names);

// "<message>; this site has: a, b, c; did you mean 'b'?" — at most kListedNames names (then
// "and N more"); "; this site has none" for an empty list. The sentence for an unknown name.
inline constexpr std::size_t kListedNames = 20;
std::string withSuggestion(const std::string& message, std::string_view name,
                           const std::vector<std::string>& names);

}  // namespace tuneplane
