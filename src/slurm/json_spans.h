// Where the members of a JSON object begin and end, found by following only strings and
// brackets: the top level of a large slurmrestd answer, walked without a parser so that its
// records array can be handed to simdjson in batches (record_batches.h) and the few other
// members parsed as a small envelope.
//
// It checks the punctuation it walks over ('{', '"key"', ':', ',', '}', nothing after the
// closing brace) but looks inside a value only to find its end: strings must close and hold
// no control character, brackets must balance, a backslash escapes the next byte (as in
// simdjson's first stage). Keys are raw bytes, escapes not decoded, as simdjson's
// `field.key()` compares them.
//
// Pure functions over the text; thread-safe. Errors: "slurm.bad_response" naming the member
// where the text stopped making sense, with the byte offset in the message.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tuneplane::slurm {

struct JsonSpan {
  size_t begin = 0;  // offset of the value's first byte
  size_t end = 0;    // one past its last byte
  bool operator==(const JsonSpan&) const = default;
};

struct JsonMember {
  std::string_view key;  // raw, between the quotes
  JsonSpan value;
};

// Reads the array value that starts at `begin` (its '[') and returns the offset one past its
// ']'.
using ArrayReader = std::function<Result<size_t>(size_t begin)>;

// The members of the object that is the whole of `text` (whitespace around it allowed), in
// order; duplicate keys are all listed. The value of a member named `handed_over` that is an
// array is not walked here: `read` reads it and says where it ends.
Result<std::vector<JsonMember>> objectMembers(std::string_view text,
                                              std::string_view handed_over = {},
                                              const ArrayReader& read = nullptr);

// The offset of the first byte at or after `pos` that is not JSON whitespace.
size_t skipSpace(std::string_view text, size_t pos);

}  // namespace tuneplane::slurm
