// Where the members of a JSON object and the elements of an array begin and end, found by
// following only strings and brackets. A large slurmrestd answer is handed to simdjson one
// record at a time through these spans, so the parser's index (4 bytes per token, about the
// size of compact JSON) never covers more than one record.
//
// It checks the punctuation it walks over ('{', '"key"', ':', ',', '}', '[', ']', nothing after
// the closing brace) but looks inside a value only to find its end: strings must close and
// brackets balance. simdjson validates every value that is decoded; a value that is skipped
// gets the same check as simdjson's On-Demand skip (balanced, strings closed). Keys are raw
// bytes (escapes not decoded), as simdjson's `field.key()` compares them.
//
// Pure functions over the text; thread-safe. Errors: "slurm.bad_response" naming the member
// (or `name[i]`) where the text stopped making sense, with the byte offset in the message.
#pragma once

#include <cstddef>
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

// The members of the object that is the whole of `text` (whitespace around it allowed), in
// order; duplicate keys are all listed.
Result<std::vector<JsonMember>> objectMembers(std::string_view text);

// The elements of the array at `array` (a span from objectMembers whose first byte is '[').
// `name` is the member's key, for errors ("jobs[3]").
Result<std::vector<JsonSpan>> arrayElements(std::string_view text, JsonSpan array,
                                            std::string_view name);

}  // namespace tuneplane::slurm
