#include "spec/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <set>

#include "common/text_checks.h"
#include "spec/names.h"

namespace tuneplane::spec {
namespace {

bool allOf(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}
bool isDec(char c) {
  return c >= '0' && c <= '9';
}
bool isOct(char c) {
  return c >= '0' && c <= '7';
}
bool isHex(char c) {
  return isDec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?  (YAML 1.2 core float, ints included)
bool isDecimalNumber(std::string_view s) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  const std::size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos) {
    std::string_view exponent = s.substr(e + 1);
    if (!exponent.empty() && (exponent.front() == '-' || exponent.front() == '+')) {
      exponent.remove_prefix(1);
    }
    if (!allOf(exponent, isDec)) return false;
  }
  const std::size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return allOf(mantissa, isDec);
  const std::string_view whole = mantissa.substr(0, dot);
  const std::string_view frac = mantissa.substr(dot + 1);
  if (whole.empty()) return allOf(frac, isDec);
  return allOf(whole, isDec) && (frac.empty() || allOf(frac, isDec));
}

// An unquoted scalar that YAML (1.2 core, plus yaml-cpp's 1.1 booleans) reads as a number
// or a boolean rather than as text.
bool looksNonString(const std::string& text) {
  static const std::set<std::string_view> kWords = {
      "true", "True", "TRUE", "false", "False", "FALSE", "yes",  "Yes",
      "YES",  "no",   "No",   "NO",    "on",    "On",    "ON",   "off",
      "Off",  "OFF",  ".nan", ".NaN",  ".NAN",  ".inf",  ".Inf", ".INF"};
  std::string_view s = text;
  if (kWords.count(s) != 0) return true;
  if (!s.empty() && (s.front() == '-' || s.front() == '+') && kWords.count(s.substr(1)) != 0 &&
      s.substr(1).starts_with(".")) {
    return true;  // -.inf
  }
  if (s.starts_with("0o")) return allOf(s.substr(2), isOct);
  if (s.starts_with("0x")) return allOf(s.substr(2), isHex);
  return isDecimalNumber(s);
}

bool isPlain(const YAML::Node& node) {
  return node.Tag() == "?";
}

const char* typeName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return looksNonString(node.Scalar()) && isPlain(node) ? "a number or boolean" : "a string";
    default:
      return "nothing";
  }
}

}  // namespace

std::optional<YAML::Node> YamlReader::parseRoot(std::string_view text) {
  // Measured first, so a document whose aliases expand past the limits is never built or
  // walked (document_measure.h).
  if (auto breach = measureDocument(text, limits_)) {
    report(breach->kind, std::move(breach->field), std::move(breach->message));
    return std::nullopt;
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    report("parse_error", "", parseErrorMessage(e.mark.line, e.mark.column, e.msg));
    return std::nullopt;
  }
  if (!present(root)) {
    report("parse_error", "", "the document is empty");
    return std::nullopt;
  }
  if (!root.IsMap()) {
    report("wrong_type", "", std::string("the document must be a map, not ") + typeName(root));
    return std::nullopt;
  }
  return root;
}

void YamlReader::report(std::string_view kind, std::string field, std::string message) {
  errors_.push_back(Error{prefix_ + "." + std::string(kind), std::move(field), std::move(message)});
}

std::string YamlReader::child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string YamlReader::index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

YAML::Node YamlReader::get(const YAML::Node& map, std::string_view key) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& cmap = map;
  // Iterate rather than cmap[key] so a duplicate key resolves to its first occurrence
  // consistently and nothing is ever inserted.
  for (const auto& kv : cmap) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool YamlReader::checkMap(const YAML::Node& node, const std::string& path,
                          std::initializer_list<std::string_view> allowed) {
  if (!checkMap(node, path)) return false;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) continue;  // reported by checkMap(node, path)
    const std::string& key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string known;
      for (std::string_view k : allowed) known += (known.empty() ? "" : ", ") + std::string(k);
      report("unknown_field", child(path, key), "unknown field (known here: " + known + ")");
    }
  }
  return true;
}

bool YamlReader::checkMap(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) {
    report("wrong_type", path, std::string("must be a map, not ") + typeName(node));
    return false;
  }
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      report("wrong_type", path, "map keys must be strings");
      continue;
    }
    const std::string& key = kv.first.Scalar();
    if (key.find('\0') != std::string::npos) {
      report("nul_byte", path, "a key contains a NUL byte");
      continue;
    }
    if (!isUtf8(key)) {
      report("invalid_utf8", path, "a key is not valid UTF-8");
      continue;
    }
    if (!seen.insert(key).second) {
      report("duplicate_key", child(path, key), "the key appears more than once");
    }
  }
  return true;
}

YAML::Node YamlReader::require(const YAML::Node& map, std::string_view key,
                               const std::string& path) {
  YAML::Node node = get(map, key);
  if (!present(node)) report("missing_field", child(path, key), "required field is missing");
  return node;
}

std::optional<std::string> YamlReader::str(const YAML::Node& node, const std::string& path,
                                           Text text) {
  if (!node.IsScalar() ||
      (text == Text::kString && isPlain(node) && looksNonString(node.Scalar()))) {
    report("wrong_type", path,
           std::string("must be a string, not ") + typeName(node) +
               (node.IsScalar() ? " (quote it)" : ""));
    return std::nullopt;
  }
  if (node.Scalar().find('\0') != std::string::npos) {
    report("nul_byte", path, "contains a NUL byte, which cannot reach a process");
    return std::nullopt;
  }
  // Every string ends up in JSON (the submit body, the API's answers, the store), which
  // holds only UTF-8; refused here, the error names the spec's own field (found by
  // fuzz/script_render_fuzz.cc: it reached the renderer's check as "command[2]").
  if (!isUtf8(node.Scalar())) {
    report("invalid_utf8", path, "is not valid UTF-8");
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<long long> YamlReader::integer(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar() || !isPlain(node)) {
    report("wrong_type", path, std::string("must be an integer, not ") + typeName(node));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  long long value = 0;
  const char* begin = s.data() + (s.starts_with('+') ? 1 : 0);
  const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) {
    report("out_of_range", path, "the number is too large");
    return std::nullopt;
  }
  if (ec != std::errc() || end != s.data() + s.size() || begin == s.data() + s.size()) {
    report("wrong_type", path, "must be an integer, not '" + s + "'");
    return std::nullopt;
  }
  return value;
}

std::optional<int> YamlReader::int32(const YAML::Node& node, const std::string& path) {
  const auto value = integer(node, path);
  if (!value) return std::nullopt;
  if (*value > INT_MAX || *value < INT_MIN) {
    report("out_of_range", path, "the number is too large");
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

std::optional<bool> YamlReader::boolean(const YAML::Node& node, const std::string& path) {
  if (node.IsScalar() && isPlain(node)) {
    std::string s = node.Scalar();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    if (s == "true") return true;
    if (s == "false") return false;
  }
  report("wrong_type", path, "must be true or false");
  return std::nullopt;
}

std::optional<std::chrono::minutes> YamlReader::timeLimit(const YAML::Node& node,
                                                          const std::string& path) {
  const auto text = str(node, path, Text::kAnyScalar);
  if (!text) return std::nullopt;
  const auto d = parseDuration(*text);
  if (!d || d->count() <= 0 || d->count() % 60000 != 0) {
    report(
        "invalid_duration", path,
        "'" + *text + "' is not a positive whole number of minutes such as 90m, 2h, 1d or 1h30m");
    return std::nullopt;
  }
  return std::chrono::duration_cast<std::chrono::minutes>(*d);
}

std::optional<std::vector<std::string>> YamlReader::strList(const YAML::Node& node,
                                                            const std::string& path, Text text) {
  if (!node.IsSequence()) {
    report("wrong_type", path, std::string("must be a list, not ") + typeName(node));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (std::size_t i = 0; i < node.size(); ++i) {
    auto value = str(node[i], index(path, i), text);
    if (value) {
      out.push_back(std::move(*value));
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::map<std::string, std::string>> YamlReader::strMap(const YAML::Node& node,
                                                                     const std::string& path,
                                                                     Text values) {
  if (!checkMap(node, path)) return std::nullopt;
  std::map<std::string, std::string> out;
  bool ok = true;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      ok = false;
      continue;
    }
    auto value = str(kv.second, child(path, kv.first.Scalar()), values);
    if (value) {
      out.emplace(kv.first.Scalar(), std::move(*value));
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> YamlReader::optStr(const YAML::Node& map, std::string_view key,
                                              const std::string& path) {
  const YAML::Node node = get(map, key);
  if (!present(node)) return std::nullopt;
  return str(node, child(path, key));
}

std::optional<int> YamlReader::optInt(const YAML::Node& map, std::string_view key,
                                      const std::string& path) {
  const YAML::Node node = get(map, key);
  if (!present(node)) return std::nullopt;
  return int32(node, child(path, key));
}

}  // namespace tuneplane::spec
