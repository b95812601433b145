// See spec_edit.h.
#include "spec/spec_edit.h"

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace tuneplane::spec {

std::optional<std::string> insertMapEntry(std::string_view text,
                                          const std::vector<std::string>& map_path,
                                          std::string_view entry) {
  std::string out(text);
  YAML::Node map;
  try {
    map = YAML::Load(out);
    for (const std::string& key : map_path) {
      if (!map.IsMap()) return std::nullopt;
      map = map[key];
    }
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  if (!map || !map.IsMap()) return std::nullopt;
  const std::size_t at = map.Mark().pos;
  if (at >= out.size()) return std::nullopt;
  if (out[at] == '{') {
    const std::size_t next = out.find_first_not_of(" \t\r\n", at + 1);
    const bool empty = next != std::string::npos && out[next] == '}';
    out.insert(at + 1, std::string(entry) + (empty ? "" : ", "));
    return out;
  }
  if (out[at] == '&' || out[at] == '!' || out[at] == '-' || out[at] == '[') return std::nullopt;
  out.insert(at, std::string(entry) + "\n" +
                     std::string(static_cast<std::size_t>(map.Mark().column), ' '));
  return out;
}

std::string quotedEntry(std::string_view key, std::string_view value) {
  return nlohmann::json(std::string(key)).dump() + ": " + nlohmann::json(std::string(value)).dump();
}

}  // namespace tuneplane::spec
