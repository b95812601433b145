// Lenient reads of slurmrestd values with simdjson On-Demand, as answer_decoder.h promises
// them: a value of another type than expected leaves the empty value (slurmrestd omits what
// is unset, and the old decoder read it so), strings are kept verbatim, `{set, infinite,
// number}` and plain numbers both give a NoValNumber. A scalar that is read is validated even
// when its type is not the expected one, so a mangled `tru` is an error and not a `false`.
// The only errors are simdjson's codes for malformed JSON; the record decoders turn them into
// "slurm.bad_response" naming the field. Internal to the slurm module (it exposes simdjson).
// Thread-safety: stateless functions; a KeyIndex is immutable after construction.
#pragma once

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "slurm/job_record.h"

namespace tuneplane::slurm::json_fields {

namespace ondemand = simdjson::ondemand;
using simdjson::error_code;

// Validates a value of `type` that is not going to be read: a scalar is parsed (so a mangled
// `tru` is an error), an object or array is left for the iteration to skip. `Value` is an
// ondemand::value or, for a record parsed on its own, an ondemand::document.
template <typename Value>
error_code checkScalar(Value& value, ondemand::json_type type) {
  switch (type) {
    case ondemand::json_type::boolean:
      return value.get_bool().error();
    case ondemand::json_type::number:
      return value.get_number().error();
    case ondemand::json_type::string:
      return value.get_string().error();
    case ondemand::json_type::null: {
      bool is_null = false;
      if (auto e = value.is_null().get(is_null)) return e;
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
    default:
      return simdjson::SUCCESS;
  }
}

// Validates a records-array element that is an array and is skipped, and gives its text in
// `raw`: it is parsed whole by simdjson's validating DOM parser, because the On-Demand skip
// only counts brackets (`[1}` passes, and a skip that ends in the wrong place makes the two
// decode paths disagree: fuzz/regressions/slurm_answers). slurmrestd never sends one, so
// the copy the DOM parser makes costs nothing in practice.
error_code checkSkippedArray(ondemand::value& value, std::string_view& raw);

// The key of `field` as written, without its quotes. A key containing a backslash (an
// escape) gives "", which matches nothing: keys are compared as written, like simdjson's own
// key() comparisons.
std::string_view rawKey(ondemand::raw_json_string key);

// Calls `read(key, value)` (returning an error_code) for every field of `object` in document
// order, and stops at the first error.
template <typename Read>
error_code eachField(ondemand::object& object, Read&& read) {
  // The key and value are taken from the iterator's result directly: moving it into an
  // ondemand::field first costs a store-forwarding stall per field (seen in profiles).
  for (auto&& field : object) {
    ondemand::raw_json_string raw;
    if (auto e = field.key().get(raw)) return e;
    ondemand::value value;
    if (auto e = field.value().get(value)) return e;
    if (auto e = read(rawKey(raw), value)) return e;
  }
  return simdjson::SUCCESS;
}

// eachField when `value` is an object; any other value is left alone (a scalar validated).
template <typename Read>
error_code readObject(ondemand::value& value, Read&& read) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type != ondemand::json_type::object) return checkScalar(value, type);
  ondemand::object object;
  if (auto e = value.get_object().get(object)) return e;
  return eachField(object, read);
}

// Whether simdjson has consumed the whole document (3.0 has no document::at_end()).
inline bool atEnd(ondemand::document& doc) {
  return doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
}

// "jobs[3]": where a record sits, for errors.
inline std::string indexed(std::string_view key, size_t index) {
  return std::string(key) + "[" + std::to_string(index) + "]";
}

// A string; anything else gives "".
error_code readString(ondemand::value& value, std::string& out);

// Calls `part(view)` for each comma-separated part of `text` (empty ones skipped).
template <typename Part>
void eachCsvPart(std::string_view text, Part&& part) {
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    if (comma > start) part(text.substr(start, comma - start));
    start = comma + 1;
  }
}

// A string value's text without copying it: a string without escapes (every name and id
// slurmrestd sends) is read where it lies in the answer, and left for the iteration to skip;
// one with escapes is unescaped into the parser's buffer. INCORRECT_TYPE for other values.
// `Value` is an ondemand::value or simdjson's result of one.
template <typename Value>
simdjson_inline error_code stringView(Value& value, std::string_view& out) {
  std::string_view token;
  if constexpr (std::is_same_v<Value, ondemand::value>) {
    token = value.raw_json_token();
  } else if (auto e = value.raw_json_token().get(token)) {
    return e;
  }
  // The token runs to the next one: the closing quote, then perhaps whitespace.
  while (token.size() > 2 && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                              token.back() == '\t')) {
    token.remove_suffix(1);
  }
  if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
    const std::string_view text = token.substr(1, token.size() - 2);
    bool escaped = false;
    for (char c : text) escaped |= c == '\\';  // short strings: no call to memchr
    if (!escaped) {
      out = text;
      return simdjson::SUCCESS;
    }
  }
  return value.get_string().get(out);
}

// Calls `string(view)` for each string of an array (other items skipped, validated) or each
// part of a comma-separated string (v0.0.45's csv_string is an array, older releases send a
// string); anything else calls nothing. The views point into the answer or the parser's
// buffer (stringView): they live until the parser's next document. `Value` as in stringView.
template <typename Value, typename String>
error_code eachString(Value& value, String&& string) {
  ondemand::array array;
  auto e = value.get_array().get(array);
  if (e == simdjson::INCORRECT_TYPE) {
    std::string_view text;
    e = value.get_string().get(text);
    if (e == simdjson::SUCCESS) eachCsvPart(text, string);
    if (e != simdjson::INCORRECT_TYPE) return e;
    ondemand::json_type type;
    if ((e = value.type().get(type))) return e;
    return checkScalar(value, type);
  }
  if (e) return e;
  for (auto&& item : array) {
    ondemand::value element;
    if ((e = std::move(item).get(element))) return e;
    std::string_view text;
    e = stringView(element, text);
    if (e == simdjson::SUCCESS) {
      string(text);
      continue;
    }
    if (e != simdjson::INCORRECT_TYPE) return e;
    ondemand::json_type type;
    if ((e = element.type().get(type)) || (e = checkScalar(element, type))) return e;
  }
  return simdjson::SUCCESS;
}

// eachString's strings as a vector. Inline: it runs for every state list of a 10,000-job
// answer. The strings are gathered first (as views into the parser's buffer) so that the
// vector is allocated once at its final size: growing it one string at a time cost a second
// allocation, and a copy, for every two-state list.
inline error_code readStrings(ondemand::value& value, std::vector<std::string>& out) {
  out.clear();
  std::array<std::string_view, 8> gathered;
  size_t count = 0;
  auto flush = [&] {
    out.reserve(out.size() + count);
    for (size_t i = 0; i < count; ++i) out.emplace_back(gathered[i]);
    count = 0;
  };
  auto e = eachString(value, [&](std::string_view text) {
    if (count == gathered.size()) flush();
    gathered[count++] = text;
  });
  flush();
  return e;
}

// true or false; anything else gives false.
error_code readBool(ondemand::value& value, bool& out);
// A number (a float is truncated, clamped to int64) or {set, infinite, number}; anything else
// gives an unset NoValNumber.
error_code readNoVal(ondemand::value& value, NoValNumber& out);
// readNoVal's value when set and finite, else 0.
error_code readInt(ondemand::value& value, int64_t& out);
// {status[], return_code, signal: {id, name}}; anything else gives {}.
error_code readExitCode(ondemand::value& value, ExitCode& out);

// Maps the keys one decoder reads to their position in the list it was built from; every
// other key gives -1. A small open-addressed table probed by length and three bytes: a job
// record has ~140 keys, and this lookup runs for each of them in a 10,000-job answer.
class KeyIndex {
 public:
  KeyIndex(std::initializer_list<std::string_view> keys)
      : KeyIndex(std::span<const std::string_view>(keys.begin(), keys.size())) {}
  explicit KeyIndex(std::span<const std::string_view> keys);
  int find(std::string_view key) const {
    for (size_t slot = slotOf(key);; slot = (slot + 1) % kSlots) {
      if (ids_[slot] == -1) return -1;
      if (keys_[slot] == key) return ids_[slot];
    }
  }

 private:
  static constexpr size_t kSlots = 256;  // more than 4× the keys any decoder reads
  static size_t slotOf(std::string_view key) {
    if (key.empty()) return 0;
    const auto first = static_cast<unsigned char>(key.front());
    const auto last = static_cast<unsigned char>(key.back());
    const auto middle = static_cast<unsigned char>(key[key.size() / 2]);
    return (key.size() * 37 + first * 7 + middle * 3 + last) % kSlots;
  }
  std::array<std::string_view, kSlots> keys_{};
  std::array<int, kSlots> ids_{};
};

}  // namespace tuneplane::slurm::json_fields
