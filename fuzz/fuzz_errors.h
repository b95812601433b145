// Checks on the errors a fuzzed parser returns, shared by the targets: each has a code of
// the parser's layer and a message (an empty one would reach a user as a bare code).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "common/result.h"
#include "fuzz_support.h"

namespace tuneplane::fuzz {

inline std::string describe(const Errors& errors) {
  std::string out;
  for (const Error& error : errors) out += "\n  " + error.describe();
  return out;
}

inline bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Every error's code starts with one of `prefixes` ("spec." …) and it has a message.
inline void checkErrors(const Errors& errors, std::initializer_list<std::string_view> prefixes) {
  for (const Error& error : errors) {
    bool known = false;
    for (std::string_view prefix : prefixes) known = known || startsWith(error.code, prefix);
    FUZZ_CHECK(known, "an error of another layer: " + error.describe());
    FUZZ_CHECK(!error.message.empty(), "an error without a message: " + error.describe());
  }
}

}  // namespace tuneplane::fuzz
