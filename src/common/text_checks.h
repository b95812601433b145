// Checks of untrusted text, one definition each: whether bytes are well-formed UTF-8 and
// whether a string is a SHA-256 digest as the project writes them, whether a name can be a
// Unix user's. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tuneplane {

// Well-formed UTF-8 (RFC 3629): no overlong form, no surrogate, nothing above U+10FFFF, no
// truncated sequence. The empty string is UTF-8.
bool isUtf8(std::string_view text);

// Exactly 64 lower-case hexadecimal digits.
bool isSha256Hex(std::string_view hex);

// `size` bytes as lower-case hexadecimal digits, two a byte: how digests are written.
std::string lowerHex(const unsigned char* bytes, std::size_t size);

// A portable Unix user name as useradd takes it and Slurm passes it on: 1 to 32 characters,
// [a-z_] first, then [a-z0-9_-] (POSIX's portable set, lower case as Debian's NAME_REGEX).
bool isUnixUserName(std::string_view name);

}  // namespace tuneplane
