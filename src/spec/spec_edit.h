// Small edits of a spec's text that keep the rest of it as written (comments, order, style):
// one entry added to one of its mappings. Used where TunePlane fills in a field for the user
// — serve's default Slurm account and QOS (api/job_charge.h), the CLI's spec.workdir
// (`tuneplane submit --workdir`). Pure. A caller re-parses the result and compares it with
// what it meant, since a text insertion is trusted only as far as that check goes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::spec {

// `text` with `entry` (`"key": value`, JSON-quoted: valid in YAML and JSON alike) added to the
// mapping at `map_path` (e.g. {"spec", "scheduling"}): after a flow mapping's '{', or as a
// line of its own before a block mapping's first key. nullopt when the text does not parse,
// the path is not a mapping, or the mapping starts with anything else (an anchor, a tag),
// where a text insertion could not be trusted.
std::optional<std::string> insertMapEntry(std::string_view text,
                                          const std::vector<std::string>& map_path,
                                          std::string_view entry);

// `"key": "value"`, both JSON-quoted.
std::string quotedEntry(std::string_view key, std::string_view value);

}  // namespace tuneplane::spec
