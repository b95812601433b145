// Checks of untrusted text, one definition each: whether bytes are well-formed UTF-8 and
// whether a string is a SHA-256 digest as the project writes them. Pure.
#pragma once

#include <string_view>

namespace tuneplane {

// Well-formed UTF-8 (RFC 3629): no overlong form, no surrogate, nothing above U+10FFFF, no
// truncated sequence. The empty string is UTF-8.
bool isUtf8(std::string_view text);

// Exactly 64 lower-case hexadecimal digits.
bool isSha256Hex(std::string_view hex);

}  // namespace tuneplane
