// One more user in a site file's server.tokens, written into the operator's text without
// rewriting the rest of it (comments, order and quoting stay as they were): the edit behind
// `tuneplane token add`. The entry goes in as a flow mapping, first in the list, with the
// list's own indentation; a site without a server: section (or without tokens) gets one.
// The caller reads the result back with the site loader before writing it anywhere.
// Pure: text in, text out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tuneplane::siteinit {

struct TokenEntry {
  std::string user;
  std::string token_sha256;  // never the token itself
  bool admin = false;
  std::vector<std::string> slurm_accounts = {};  // the first is the default
  std::vector<std::string> qos = {};
  std::string unix_user = {};  // slurm.identity per_user: the Unix user; "" leaves it out
};

// The entry as YAML flow text: {user: "alice", token_sha256: "…", admin: true, …}.
std::string tokenEntryYaml(const TokenEntry& entry);

// `site_yaml` with `entry` added to server.tokens. Errors: "site.unreadable" (the text is
// not a YAML mapping), "site.not_editable" (server or server.tokens is not a mapping / list,
// or starts with an anchor or a tag, where an insertion could not be trusted; the message
// gives the line to add by hand).
Result<std::string> addTokenEntry(std::string_view site_yaml, const TokenEntry& entry);

}  // namespace tuneplane::siteinit
