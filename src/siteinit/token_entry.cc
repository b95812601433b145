// See token_entry.h.
#include "siteinit/token_entry.h"

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace tuneplane::siteinit {
namespace {

std::string quotedScalar(const std::string& text) {
  return nlohmann::json(text).dump();  // a JSON string is a YAML double-quoted scalar
}

std::string flowList(const std::vector<std::string>& names) {
  std::string out = "[";
  for (const auto& name : names) out += (out.size() > 1 ? ", " : "") + quotedScalar(name);
  return out + "]";
}

Error notEditable(const std::string& why, const TokenEntry& entry) {
  return Error{"site.not_editable", "server.tokens",
               why + ": add this entry to server.tokens by hand: " + tokenEntryYaml(entry)};
}

bool unsafeStart(char c) {
  return c == '&' || c == '!' || c == '*';
}

}  // namespace

std::string tokenEntryYaml(const TokenEntry& entry) {
  std::string out =
      "{user: " + quotedScalar(entry.user) + ", token_sha256: " + quotedScalar(entry.token_sha256);
  if (entry.admin) out += ", admin: true";
  if (!entry.slurm_accounts.empty()) out += ", slurm_account: " + flowList(entry.slurm_accounts);
  if (!entry.qos.empty()) out += ", qos: " + flowList(entry.qos);
  if (!entry.unix_user.empty()) out += ", unix_user: " + quotedScalar(entry.unix_user);
  return out + "}";
}

Result<std::string> addTokenEntry(std::string_view site_yaml, const TokenEntry& entry) {
  std::string text(site_yaml);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return fail("site.unreadable", "", std::string("the site file is not YAML: ") + e.what());
  }
  if (!root.IsMap()) return fail("site.unreadable", "", "the site file is not a YAML mapping");
  const std::string item = tokenEntryYaml(entry);
  const YAML::Node server = root["server"];
  if (!server) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += "server:\n  tokens:\n    - " + item + "\n";
    return text;
  }
  if (!server.IsMap()) return tl::unexpected(notEditable("server: is not a mapping", entry));
  const std::size_t server_at = server.Mark().pos;
  if (server_at >= text.size() || unsafeStart(text[server_at])) {
    return tl::unexpected(notEditable("server: starts with an anchor or a tag", entry));
  }
  const bool flow_server = text[server_at] == '{';
  const auto column = static_cast<std::size_t>(server.Mark().column);
  const YAML::Node tokens = server["tokens"];
  if (!tokens) {
    if (flow_server) {
      const std::size_t next = text.find_first_not_of(" \t\r\n", server_at + 1);
      const bool empty = next != std::string::npos && text[next] == '}';
      text.insert(server_at + 1, "tokens: [" + item + "]" + (empty ? "" : ", "));
    } else {
      text.insert(server_at, "tokens:\n" + std::string(column + 2, ' ') + "- " + item + "\n" +
                                 std::string(column, ' '));
    }
    return text;
  }
  if (!tokens.IsSequence()) {
    return tl::unexpected(notEditable("server.tokens is not a list", entry));
  }
  const std::size_t at = tokens.Mark().pos;
  if (at >= text.size() || unsafeStart(text[at])) {
    return tl::unexpected(notEditable("server.tokens starts with an anchor or a tag", entry));
  }
  if (text[at] == '[') {
    const std::size_t close = text.find_first_not_of(" \t\r\n", at + 1);
    const bool empty = close != std::string::npos && text[close] == ']';
    if (empty && !flow_server) {
      // `tokens: []` in a block mapping becomes a block list, one entry a line.
      text.replace(at, close + 1 - at, "\n" + std::string(column + 2, ' ') + "- " + item);
    } else {
      text.insert(at + 1, item + (empty ? "" : ", "));
    }
    return text;
  }
  if (text[at] != '-') return tl::unexpected(notEditable("server.tokens has an odd form", entry));
  const auto list_column = static_cast<std::size_t>(tokens.Mark().column);
  text.insert(at, "- " + item + "\n" + std::string(list_column, ' '));
  return text;
}

}  // namespace tuneplane::siteinit
