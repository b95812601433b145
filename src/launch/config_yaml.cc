// See config_yaml.h.
#include "launch/config_yaml.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>

namespace tuneplane::launch {
namespace {

using nlohmann::json;

bool isAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Words a YAML 1.1 or 1.2 reader types as something other than a string (booleans, null),
// in any case.
bool isYamlWord(std::string_view s) {
  static constexpr std::array<std::string_view, 9> kWords = {"y",   "n",    "yes",   "no",  "on",
                                                             "off", "true", "false", "null"};
  if (s.size() > 5) return false;
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (std::string_view w : kWords) {
    if (lower == w) return true;
  }
  return false;
}

// True when `s` can stand bare, as a key or a value, in block and flow context alike, and
// every YAML reader reads it back as this string.
bool isBare(std::string_view s) {
  if (s.empty() || !(isAsciiLetter(s.front()) || s.front() == '_' || s.front() == '/')) {
    return false;
  }
  for (char c : s) {
    const bool ok =
        isAsciiLetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == '-';
    if (!ok) return false;
  }
  return !isYamlWord(s);
}

void appendEscape(std::string& out, char kind, uint32_t code, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*X", kind, digits, static_cast<unsigned>(code));
  out += buf;
}

// The length of the UTF-8 sequence starting with `lead` (1 for anything else: the spec only
// holds valid UTF-8, so that is never a broken sequence here).
std::size_t sequenceLength(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

uint32_t decode(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<uint32_t>(s[i]) & 0x3F; };
  const auto lead = static_cast<unsigned char>(s[0]);
  if (s.size() == 2) return ((lead & 0x1Fu) << 6) | byte(1);
  if (s.size() == 3) return ((lead & 0x0Fu) << 12) | (byte(1) << 6) | byte(2);
  return ((lead & 0x07u) << 18) | (byte(1) << 12) | (byte(2) << 6) | byte(3);
}

// A code point a YAML reader would fold (line separators), refuse (PyYAML's non-printable:
// C1 controls, U+FFFE, U+FFFF) or drop (a byte-order mark).
bool mustEscape(uint32_t code) {
  return (code >= 0x80 && code <= 0x9F) || code == 0x2028 || code == 0x2029 || code == 0xFEFF ||
         code == 0xFFFE || code == 0xFFFF;
}

std::string doubleQuoted(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      appendEscape(out, 'x', c, 2);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      const std::size_t length = std::min(sequenceLength(c), s.size() - i);
      const std::string_view sequence = s.substr(i, length);
      const uint32_t code = length > 1 ? decode(sequence) : c;
      if (mustEscape(code)) {
        appendEscape(out, 'u', code, 4);
      } else {
        out += sequence;
      }
      i += length;
    }
  }
  return out + "\"";
}

std::string scalarText(const std::string& s) {
  return isBare(s) ? s : doubleQuoted(s);
}

// Shortest round-trip digits, then the form PyYAML's float pattern needs:
// [-+]?[0-9]+\.[0-9]*([eE][-+][0-9]+)?.
std::string floatText(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string text(buf, ec == std::errc() ? end : buf);
  const std::size_t e = text.find('e');
  std::string mantissa = text.substr(0, e);
  if (mantissa.find('.') == std::string::npos) mantissa += ".0";
  if (e == std::string::npos) return mantissa;
  std::string exponent = text.substr(e + 1);
  if (exponent.front() != '-' && exponent.front() != '+') exponent = "+" + exponent;
  return mantissa + "e" + exponent;
}

}  // namespace

std::string yamlValue(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
      return std::to_string(value.get<int64_t>());
    case json::value_t::number_unsigned:
      return std::to_string(value.get<uint64_t>());
    case json::value_t::number_float:
      return floatText(value.get<double>());
    case json::value_t::string:
      return scalarText(value.get_ref<const std::string&>());
    case json::value_t::array: {
      std::string out = "[";
      for (const json& item : value) out += (out.size() > 1 ? ", " : "") + yamlValue(item);
      return out + "]";
    }
    case json::value_t::object: {
      std::string out = "{";
      for (const auto& [key, item] : value.items()) {
        out += (out.size() > 1 ? ", " : "") + scalarText(key) + ": " + yamlValue(item);
      }
      return out + "}";
    }
    default:
      return "null";  // binary and discarded values never come from the spec
  }
}

std::string configYaml(const json& object, std::string_view comment) {
  std::string out;
  for (std::size_t start = 0; start < comment.size();) {
    const std::size_t end = std::min(comment.find('\n', start), comment.size());
    std::string line(comment.substr(start, end - start));
    for (char& c : line) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte >= 0x7F) c = '?';
    }
    out += "# " + line + "\n";
    start = end + 1;
  }
  for (const auto& [key, value] : object.items()) {
    out += scalarText(key) + ": " + yamlValue(value) + "\n";
  }
  return out;
}

}  // namespace tuneplane::launch
