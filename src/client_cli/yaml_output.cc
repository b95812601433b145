#include "client_cli/yaml_output.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace tuneplane::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Would a plain scalar with this text be read as something other than this string, by
// YAML 1.1 or 1.2 readers? Anything that starts like a number is quoted too ("1h30m" costs
// two quotes; a missed "0x1F" or "1_000" would change type).
bool needsQuotes(std::string_view text) {
  if (text.empty()) return true;
  static constexpr std::array<std::string_view, 16> kWords = {
      "true", "false", "yes",  "no",   "on",    "off",   "y",  "n",
      "null", "~",     ".nan", ".inf", "-.inf", "+.inf", "<<", "="};
  if (std::find(kWords.begin(), kWords.end(), lower(text)) != kWords.end()) return true;
  const char first = text.front();
  return std::isdigit(static_cast<unsigned char>(first)) != 0 || first == '+' || first == '-' ||
         first == '.';
}

// A literal block keeps text exactly only if it ends in one newline (the default "clip"
// chomping), starts without a blank or a newline (else an indentation indicator would be
// needed) and has no carriage return or other control character.
bool literalSafe(std::string_view text) {
  if (text.size() < 2 || text.back() != '\n' || text[text.size() - 2] == '\n') return false;
  if (text.front() == ' ' || text.front() == '\t' || text.front() == '\n') return false;
  return std::none_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n' && c != '\t') || u == 0x7f;
  });
}

void emitString(YAML::Emitter& out, const std::string& text) {
  if (text.find('\n') != std::string::npos) {
    out << (literalSafe(text) ? YAML::Literal : YAML::DoubleQuoted) << text;
  } else if (needsQuotes(text)) {
    out << YAML::DoubleQuoted << text;
  } else {
    out << text;
  }
}

void emit(YAML::Emitter& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        emitString(out, key);
        out << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      return;
    case Json::value_t::array:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const Json& item : value) emit(out, item);
      out << YAML::EndSeq;
      return;
    case Json::value_t::string:
      emitString(out, value.get<std::string>());
      return;
    case Json::value_t::boolean:
      out << (value.get<bool>() ? "true" : "false");
      return;
    case Json::value_t::null:
    case Json::value_t::discarded:
      out << YAML::Null;
      return;
    default:  // numbers, exactly as JSON writes them
      out << value.dump();
      return;
  }
}

}  // namespace

std::string toYaml(const Json& document) {
  YAML::Emitter out;
  out.SetNullFormat(YAML::LowerNull);
  out.SetIndent(2);
  emit(out, document);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

}  // namespace tuneplane::cli
