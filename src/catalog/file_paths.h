// Path rules for the site file and the runtime registry: relative paths resolve against
// the directory of the file that names them (never the process's working directory), and
// mount paths must be safe inside --container-mounts / --bind lists. Pure string functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tuneplane::catalog {

// `value` when absolute; else `base_dir`/`value`, lexically normalised; nullopt when
// relative and there is no base directory (the text was not read from a file).
std::optional<std::string> resolveAgainst(const std::string& value,
                                          const std::optional<std::string>& base_dir);

// Why `path` cannot be a mount source or target, or nullopt when it can: it must be
// absolute, have no ".." component, and contain no ',' or ':' (the list separators of
// --container-mounts and --bind) and no control characters.
std::optional<std::string> mountPathProblem(std::string_view path);

// The directory holding `file` ("." when it has none).
std::string directoryOf(const std::string& file);
// The same, made absolute against the working directory (so later chdirs do not matter).
std::string absoluteDirectoryOf(const std::string& file);

// The whole content of a small text file (site, registry, spec); nullopt when unreadable.
std::optional<std::string> readWholeFile(const std::string& path);

}  // namespace tuneplane::catalog
