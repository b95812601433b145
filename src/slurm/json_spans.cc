#include "slurm/json_spans.h"

#include <array>
#include <string>

namespace tuneplane::slurm {
namespace {

constexpr size_t kNone = std::string_view::npos;

// What a byte means to the bracket walk outside strings. A backslash there is never JSON:
// the walk refuses it (simdjson's first stage would read it as escaping the next byte, and
// its second stage refuses the answer, so the batched path must not accept it either: found
// by fuzz/slurm_answers_fuzz.cc, fuzz/regressions/slurm_answers/backslashes-between-values).
// Nor is a byte that no scalar, space or punctuation holds (a NUL, a form feed, '@'): simdjson
// refuses the answer, so the walk does too (fuzz/regressions/slurm_answers/nul-as-a-value).
enum Kind : uint8_t { kOther, kQuote, kOpen, kClose, kEscape, kForeign };

// The bytes of a JSON scalar outside strings: numbers, true, false, null.
constexpr std::string_view kScalarBytes = "0123456789+-.eEtrufalsn";

constexpr std::array<uint8_t, 256> kKinds = [] {
  std::array<uint8_t, 256> kinds{};
  kinds.fill(kForeign);
  for (unsigned char c : kScalarBytes) kinds[c] = kOther;
  for (unsigned char c : std::string_view(" \t\r\n,:")) kinds[c] = kOther;
  kinds['"'] = kQuote;
  kinds['\\'] = kEscape;
  kinds['{'] = kOpen;
  kinds['['] = kOpen;
  kinds['}'] = kClose;
  kinds[']'] = kClose;
  return kinds;
}();

// Bytes that stop a walk through a string: its end, an escape, and the control characters
// JSON forbids there (simdjson's first stage refuses them anywhere in a string).
constexpr std::array<bool, 256> kStringStops = [] {
  std::array<bool, 256> stops{};
  for (int c = 0; c < 0x20; ++c) stops[c] = true;
  stops['"'] = true;
  stops['\\'] = true;
  return stops;
}();

// Bytes that end a scalar (number, true, false, null).
constexpr std::array<bool, 256> kScalarEnds = [] {
  std::array<bool, 256> ends{};
  for (unsigned char c : std::string_view(" \t\r\n,:]}[{\"")) ends[c] = true;
  return ends;
}();

unsigned char at(std::string_view text, size_t pos) {
  return static_cast<unsigned char>(text[pos]);
}

// REQUIRES: text[pos] == '"'. One past the closing quote, or kNone if the string never
// closes or holds a control character.
size_t skipString(std::string_view text, size_t pos) {
  const size_t size = text.size();
  ++pos;
  for (;;) {
    while (pos < size && !kStringStops[at(text, pos)]) ++pos;
    if (pos >= size) return kNone;
    if (text[pos] == '"') return pos + 1;
    if (text[pos] != '\\') return kNone;  // a control character
    if (pos + 1 < size && at(text, pos + 1) < 0x20) return kNone;
    pos += 2;  // a backslash and the byte it escapes
  }
}

// REQUIRES: text[pos] is '{' or '['. One past the bracket that closes it, or kNone.
size_t skipContainer(std::string_view text, size_t pos) {
  const auto* const begin = reinterpret_cast<const unsigned char*>(text.data());
  const auto* const end = begin + text.size();
  const unsigned char* p = begin + pos;
  size_t depth = 0;
  while (p < end) {
    switch (kKinds[*p++]) {
      case kOther:
        break;
      case kQuote:
        for (;;) {
          while (p < end && !kStringStops[*p]) ++p;
          if (p >= end) return kNone;
          const unsigned char c = *p++;
          if (c == '"') break;
          if (c != '\\' || p >= end || *p < 0x20) return kNone;  // a control character
          ++p;                                                   // the escaped byte
        }
        break;
      case kOpen:
        ++depth;
        break;
      case kClose:
        if (--depth == 0) return static_cast<size_t>(p - begin);
        break;
      default:  // kEscape (a backslash outside a string) or kForeign
        return kNone;
    }
  }
  return kNone;
}

// One past the value that starts at `pos`, or kNone when none starts there or it never ends.
size_t skipValue(std::string_view text, size_t pos) {
  if (pos >= text.size()) return kNone;
  switch (text[pos]) {
    case '"':
      return skipString(text, pos);
    case '{':
    case '[':
      return skipContainer(text, pos);
    default: {
      size_t end = pos;
      while (end < text.size() && !kScalarEnds[at(text, end)]) {
        if (kKinds[at(text, end)] != kOther) return kNone;  // a backslash, a foreign byte
        ++end;
      }
      return end == pos ? kNone : end;
    }
  }
}

tl::unexpected<Error> malformed(std::string field, size_t pos, const std::string& what) {
  return fail("slurm.bad_response", std::move(field),
              "malformed JSON at byte " + std::to_string(pos) + ": " + what);
}

}  // namespace

size_t skipSpace(std::string_view text, size_t pos) {
  while (pos < text.size()) {
    char c = text[pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++pos;
  }
  return pos;
}

Result<std::vector<JsonMember>> objectMembers(std::string_view text, std::string_view handed_over,
                                              const ArrayReader& read) {
  std::vector<JsonMember> members;
  size_t pos = skipSpace(text, 0);
  if (pos >= text.size() || text[pos] != '{') return malformed("", pos, "expected '{'");
  pos = skipSpace(text, pos + 1);
  if (pos < text.size() && text[pos] == '}') {
    ++pos;
  } else {
    for (;;) {
      std::string field = members.empty() ? "" : std::string(members.back().key);
      if (pos >= text.size() || text[pos] != '"') return malformed(field, pos, "expected a key");
      size_t key_end = skipString(text, pos);
      if (key_end == kNone) {
        return malformed(field, pos, "unterminated key, or a control character in it");
      }
      JsonMember member;
      member.key = text.substr(pos + 1, key_end - pos - 2);
      field = std::string(member.key);
      pos = skipSpace(text, key_end);
      if (pos >= text.size() || text[pos] != ':') return malformed(field, pos, "expected ':'");
      pos = skipSpace(text, pos + 1);
      size_t value_end = kNone;
      if (read && member.key == handed_over && pos < text.size() && text[pos] == '[') {
        auto end = read(pos);
        if (!end) return tl::unexpected(end.error());
        value_end = *end;
      } else {
        value_end = skipValue(text, pos);
      }
      if (value_end == kNone) {
        return malformed(field, pos,
                         "a value is missing, never ends or holds a control character in a string");
      }
      member.value = {pos, value_end};
      members.push_back(member);
      pos = skipSpace(text, value_end);
      if (pos < text.size() && text[pos] == ',') {
        pos = skipSpace(text, pos + 1);
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        break;
      }
      return malformed(field, pos, "expected ',' or '}'");
    }
  }
  pos = skipSpace(text, pos);
  if (pos != text.size()) {
    return malformed(members.empty() ? "" : std::string(members.back().key), pos,
                     "content after the answer's closing '}'");
  }
  return members;
}

}  // namespace tuneplane::slurm
