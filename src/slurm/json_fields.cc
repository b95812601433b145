#include "slurm/json_fields.h"

#include <cstdlib>
#include <limits>

namespace tuneplane::slurm::json_fields {
namespace {

using simdjson::SUCCESS;
using Type = ondemand::json_type;

int64_t clampToInt64(double d) {
  // Out-of-range float-to-integer conversion is undefined; slurmrestd never sends such a
  // number, a corrupted answer might.
  constexpr double kLimit = 9223372036854775807.0;  // 2^63 once rounded to a double
  if (!(d > -kLimit)) return std::numeric_limits<int64_t>::min();
  if (d >= kLimit) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(d);
}

// REQUIRES: the value's type is number.
error_code readNumber(ondemand::value& value, int64_t& out) {
  ondemand::number number;
  if (auto e = value.get_number().get(number)) return e;
  switch (number.get_number_type()) {
    case ondemand::number_type::signed_integer:
      out = number.get_int64();
      break;
    case ondemand::number_type::unsigned_integer:
      out = static_cast<int64_t>(number.get_uint64());  // wraps, as the old decoder did
      break;
    default:
      out = clampToInt64(number.get_double());
      break;
  }
  return SUCCESS;
}

}  // namespace

std::string_view rawKey(ondemand::raw_json_string key) {
  // simdjson's first stage has checked that every string closes, so the scan ends.
  const char* start = key.raw();
  for (const char* p = start;; ++p) {
    if (*p == '"') return {start, static_cast<size_t>(p - start)};
    if (*p == '\\') return {};
  }
}

error_code checkSkippedArray(ondemand::value& value, std::string_view& raw) {
  ondemand::array array;
  if (auto e = value.get_array().get(array)) return e;
  if (auto e = array.raw_json().get(raw)) return e;
  simdjson::dom::parser parser;  // not kept: a hostile array's size is not held after it
  return parser.parse(raw.data(), raw.size(), /*realloc_if_needed=*/true).error();
}

// The expected type is tried first; simdjson leaves a value it refused with INCORRECT_TYPE
// unread, so it can still be looked at (type checks first cost a few % per record).
error_code readString(ondemand::value& value, std::string& out) {
  std::string_view text;
  auto e = value.get_string().get(text);
  if (e == SUCCESS) {
    out.assign(text.data(), text.size());
    return SUCCESS;
  }
  out.clear();
  if (e != simdjson::INCORRECT_TYPE) return e;
  Type type;
  if ((e = value.type().get(type))) return e;
  return checkScalar(value, type);
}

error_code readBool(ondemand::value& value, bool& out) {
  out = false;
  Type type;
  if (auto e = value.type().get(type)) return e;
  if (type != Type::boolean) return checkScalar(value, type);
  return value.get_bool().get(out);
}

error_code readNoVal(ondemand::value& value, NoValNumber& out) {
  out = {};
  Type type;
  if (auto e = value.type().get(type)) return e;
  if (type == Type::number) {
    out.set = true;
    return readNumber(value, out.number);
  }
  return readObject(value, [&](std::string_view key, ondemand::value& member) {
    if (key == "set") return readBool(member, out.set);
    if (key == "infinite") return readBool(member, out.infinite);
    if (key != "number") return SUCCESS;
    out.number = 0;
    Type member_type;
    if (auto e = member.type().get(member_type)) return e;
    return member_type == Type::number ? readNumber(member, out.number)
                                       : checkScalar(member, member_type);
  });
}

error_code readInt(ondemand::value& value, int64_t& out) {
  NoValNumber number;
  auto e = readNoVal(value, number);
  out = number.value().value_or(0);
  return e;
}

error_code readExitCode(ondemand::value& value, ExitCode& out) {
  out = {};
  return readObject(value, [&](std::string_view key, ondemand::value& member) {
    if (key == "status") return readStrings(member, out.status);
    if (key == "return_code") return readNoVal(member, out.return_code);
    if (key != "signal") return SUCCESS;
    out.signal_id = {};
    out.signal_name.clear();
    return readObject(member, [&](std::string_view signal_key, ondemand::value& signal) {
      if (signal_key == "id") return readNoVal(signal, out.signal_id);
      if (signal_key == "name") return readString(signal, out.signal_name);
      return SUCCESS;
    });
  });
}

KeyIndex::KeyIndex(std::span<const std::string_view> keys) {
  if (keys.size() * 4 > kSlots) std::abort();  // a programming error, seen at start-up
  ids_.fill(-1);
  int id = 0;
  for (std::string_view key : keys) {
    size_t slot = slotOf(key);
    while (ids_[slot] != -1) slot = (slot + 1) % kSlots;
    keys_[slot] = key;
    ids_[slot] = id++;
  }
}

}  // namespace tuneplane::slurm::json_fields
