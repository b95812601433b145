// See framework_config.h.
#include "spec/framework_config.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <string_view>

#include "common/text_checks.h"

namespace tuneplane::spec {
namespace {

using nlohmann::json;

bool allDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool dec = c >= '0' && c <= '9';
    const bool hex = (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (base == 8 && !(c >= '0' && c <= '7')) return false;
    if (base == 10 && !dec) return false;
    if (base == 16 && !(dec || hex)) return false;
  }
  return true;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?: YAML 1.2 core's float.
bool isCoreFloat(std::string_view s) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  const std::size_t e = s.find_first_of("eE");
  if (e != std::string_view::npos) {
    std::string_view exponent = s.substr(e + 1);
    if (!exponent.empty() && (exponent.front() == '-' || exponent.front() == '+')) {
      exponent.remove_prefix(1);
    }
    if (!allDigits(exponent, 10)) return false;
    s = s.substr(0, e);
  }
  const std::size_t dot = s.find('.');
  if (dot == std::string_view::npos) return allDigits(s, 10);
  const std::string_view whole = s.substr(0, dot);
  const std::string_view fraction = s.substr(dot + 1);
  if (whole.empty()) return allDigits(fraction, 10);
  return allDigits(whole, 10) && (fraction.empty() || allDigits(fraction, 10));
}

bool isWordOf(std::string_view s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (s == w) return true;
  }
  return false;
}

class ConfigReader {
 public:
  explicit ConfigReader(YamlReader& reader) : r_(reader) {}

  std::optional<json> value(const YAML::Node& node, const std::string& path, int depth) {
    const std::string& tag = node.Tag();
    const bool str_tag = tag == "tag:yaml.org,2002:str";
    if (!tag.empty() && tag != "?" && tag != "!" && !str_tag && tag != "tag:yaml.org,2002:map" &&
        tag != "tag:yaml.org,2002:seq") {
      r_.report("wrong_type", path, "YAML tags are not taken here (only !!str); write the value");
      return std::nullopt;
    }
    switch (node.Type()) {
      case YAML::NodeType::Map:
        return map(node, path, depth);
      case YAML::NodeType::Sequence:
        return list(node, path, depth);
      case YAML::NodeType::Scalar:
        return scalar(node, path, tag == "?");
      default:
        return json(nullptr);  // `key:`, `key: ~`, `key: null`
    }
  }

  std::optional<json> map(const YAML::Node& node, const std::string& path, int depth) {
    if (!r_.checkMap(node, path)) return std::nullopt;
    if (!deepEnough(path, depth)) return std::nullopt;
    json out = json::object();
    bool ok = true;
    std::set<std::string> seen;
    for (const auto& kv : node) {
      // checkMap reported keys that are not strings, hold a NUL or are not UTF-8, and
      // duplicates; none of them is read.
      if (!kv.first.IsScalar() || kv.first.Scalar().find('\0') != std::string::npos ||
          !isUtf8(kv.first.Scalar()) || !seen.insert(kv.first.Scalar()).second) {
        ok = false;
        continue;
      }
      const std::string& key = kv.first.Scalar();
      if (key.size() > kMaxConfigKeyBytes) {
        r_.report("too_long", path,
                  "a key of " + std::to_string(key.size()) + " bytes is longer than the " +
                      std::to_string(kMaxConfigKeyBytes) + " allowed");
        ok = false;
        continue;
      }
      auto v = value(kv.second, YamlReader::child(path, key), depth + 1);
      if (v) {
        out[key] = std::move(*v);
      } else {
        ok = false;
      }
    }
    if (!ok) return std::nullopt;
    return out;
  }

 private:
  std::optional<json> list(const YAML::Node& node, const std::string& path, int depth) {
    if (!deepEnough(path, depth)) return std::nullopt;
    json out = json::array();
    bool ok = true;
    for (std::size_t i = 0; i < node.size(); ++i) {
      auto v = value(node[i], YamlReader::index(path, i), depth + 1);
      if (v) {
        out.push_back(std::move(*v));
      } else {
        ok = false;
      }
    }
    if (!ok) return std::nullopt;
    return out;
  }

  bool deepEnough(const std::string& path, int depth) {
    if (depth < kMaxConfigDepth) return true;
    r_.report(
        "too_deep", path,
        "lists and maps nest more than " + std::to_string(kMaxConfigDepth) + " levels deep here");
    return false;
  }

  std::optional<json> scalar(const YAML::Node& node, const std::string& path, bool plain) {
    const std::string& text = node.Scalar();
    if (text.find('\0') != std::string::npos) {
      r_.report("nul_byte", path, "contains a NUL byte, which the framework cannot be given");
      return std::nullopt;
    }
    if (!isUtf8(text)) {
      r_.report("invalid_utf8", path, "is not valid UTF-8");
      return std::nullopt;
    }
    if (!plain) return json(text);
    return typed(text, path);
  }

  // An unquoted scalar, typed as YAML 1.2's core schema does.
  std::optional<json> typed(const std::string& text, const std::string& path) {
    const std::string_view s = text;
    if (isWordOf(s, {"", "~", "null", "Null", "NULL"})) return json(nullptr);
    if (isWordOf(s, {"true", "True", "TRUE"})) return json(true);
    if (isWordOf(s, {"false", "False", "FALSE"})) return json(false);
    if (isWordOf(s,
                 {"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"})) {
      r_.report("ambiguous_value", path,
                "unquoted '" + text +
                    "' is a string to YAML 1.2 and JSON but a boolean to LlamaFactory's YAML "
                    "reader: write true or false, or quote it for the text");
      return std::nullopt;
    }
    std::string_view digits = s;
    const bool negative = digits.starts_with('-');
    if (negative || digits.starts_with('+')) digits.remove_prefix(1);
    if (allDigits(digits, 10)) return integer(digits, negative, 10, path);
    if (s.starts_with("0o") && allDigits(s.substr(2), 8))
      return integer(s.substr(2), false, 8, path);
    if (s.starts_with("0x") && allDigits(s.substr(2), 16)) {
      return integer(s.substr(2), false, 16, path);
    }
    if (isCoreFloat(s)) {
      double v = 0;
      const char* begin = text.data() + (s.starts_with('+') ? 1 : 0);
      const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
        r_.report("out_of_range", path, "the number is too large for a 64-bit float");
        return std::nullopt;
      }
      return json(v);
    }
    std::string_view unsigned_part = s;
    if (unsigned_part.starts_with('-') || unsigned_part.starts_with('+')) {
      unsigned_part.remove_prefix(1);
    }
    if (isWordOf(unsigned_part, {".inf", ".Inf", ".INF"}) ||
        isWordOf(s, {".nan", ".NaN", ".NAN"})) {
      r_.report("invalid_value", path,
                "infinity and NaN have no JSON form; write a number, or quote it for the text");
      return std::nullopt;
    }
    return json(text);
  }

  std::optional<json> integer(std::string_view digits, bool negative, int base,
                              const std::string& path) {
    uint64_t magnitude = 0;
    const auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
    const bool read = ec == std::errc() && end == digits.data() + digits.size();
    constexpr uint64_t kMostNegative = uint64_t{1} << 63;
    if (read && !negative) {
      if (magnitude <= static_cast<uint64_t>(INT64_MAX)) {
        return json(static_cast<int64_t>(magnitude));
      }
      return json(magnitude);
    }
    if (read && magnitude <= kMostNegative) {
      return json(magnitude == kMostNegative ? INT64_MIN : -static_cast<int64_t>(magnitude));
    }
    r_.report("out_of_range", path, "the integer does not fit in 64 bits");
    return std::nullopt;
  }

  YamlReader& r_;
};

}  // namespace

std::optional<json> readFrameworkConfig(YamlReader& reader, const YAML::Node& node,
                                        const std::string& path) {
  return ConfigReader(reader).map(node, path, 0);
}

}  // namespace tuneplane::spec
