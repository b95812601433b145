// Slurm's host lists ("gpu[1-2],cpu1", "node[01-03,07]") as node names, for the nodes a
// record names (`nodes`). Pure. A list whose expansion would pass kMaxHostlistNodes is cut
// there: the caller gets the first ones, never an allocation it cannot bound.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::slurm {

inline constexpr std::size_t kMaxHostlistNodes = 4096;

// The node names of `list`, in order, each once. A bracket group holds ranges ("1-3", zero
// padding kept: "01-03" → 01, 02, 03) and single numbers, comma-separated; text that does not
// parse as a range is kept as a name as it is.
std::vector<std::string> expandHostlist(std::string_view list);

}  // namespace tuneplane::slurm
