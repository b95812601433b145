// Percent-encoding (RFC 3986 §2.1) for the URLs the project builds: a Slurm job id or signal
// in a path segment, a user in a query value, an output file's exact bytes in `path_encoded`;
// and its decoding, for the API's request targets and a listing's `path_encoded`.
// One definition: every byte but the unreserved characters (A-Z a-z 0-9 - . _ ~), and '/'
// when asked to keep it, becomes %XX (upper-case hex). Pure; locale-independent.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tuneplane {

std::string percentEncode(std::string_view text, bool keep_slash = false);

// The bytes `text` stands for ("%FF" is the byte 0xFF, either case of hex digit); a '+' is
// itself, or a space when `plus_is_space` (a query's form encoding). nullopt when a '%' is not
// followed by two hex digits.
std::optional<std::string> percentDecode(std::string_view text, bool plus_is_space = false);

}  // namespace tuneplane
