// See job_charge.h.
#include "api/job_charge.h"

#include <algorithm>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "spec/spec_edit.h"
#include "spec/spec_parser.h"

namespace tuneplane::api {
namespace {

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The choice of `field` ("account" or "qos") against what the user may use.
std::optional<Error> judge(const std::optional<std::string>& chosen,
                           const std::vector<std::string>& allowed, const std::string& user,
                           const char* field, const char* code, const char* token_key) {
  if (!chosen) return std::nullopt;
  const std::string path = std::string("spec.scheduling.") + field;
  if (allowed.empty()) {
    return Error{code, path,
                 "'" + *chosen + "': the site gives " + user + " no choice of " + field +
                     " (server.tokens[]." + token_key +
                     "); leave it out and the site's default applies"};
  }
  if (std::find(allowed.begin(), allowed.end(), *chosen) == allowed.end()) {
    return Error{code, path,
                 "'" + *chosen + "' is not one of the " + field + "s " + user +
                     " may use: " + listed(allowed)};
  }
  return std::nullopt;
}

// `text` with the defaults added to spec.scheduling; nullopt when that cannot be done safely.
std::optional<std::string> withDefaults(std::string_view spec_text,
                                        const std::optional<std::string>& account,
                                        const std::optional<std::string>& qos) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(spec_text));
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  if (!root.IsMap() || !root["spec"] || !root["spec"].IsMap()) return std::nullopt;
  const YAML::Node scheduling = root["spec"]["scheduling"];
  if (scheduling && scheduling.IsMap() && scheduling.size() > 0) {
    // Into the existing mapping, one entry at a time (the second after re-reading the text,
    // since the first moved every position after it).
    std::optional<std::string> done = std::string(spec_text);
    for (auto [key, value] : {std::pair{"account", account}, std::pair{"qos", qos}}) {
      if (!value) continue;
      done = spec::insertMapEntry(*done, {"spec", "scheduling"}, spec::quotedEntry(key, *value));
      if (!done) return std::nullopt;
    }
    return done;
  }
  if (scheduling) return std::nullopt;  // `scheduling:` with no mapping: the user's to fix
  std::string inner;
  if (account) inner += spec::quotedEntry("account", *account);
  if (qos) inner += (inner.empty() ? "" : ", ") + spec::quotedEntry("qos", *qos);
  return spec::insertMapEntry(spec_text, {"spec"}, "\"scheduling\": {" + inner + "}");
}

// Whether the spec's text can choose a charge at all. A key decodes to "scheduling" only when
// the text holds the word, or spells it through an escape ("sch\x65duling", "\u0065"), and
// every YAML and JSON escape starts with a backslash. Neither: nothing to parse — the common
// case, and GET /v1/jobs/{id} reads every stored spec through chargeOf.
bool mayChooseCharge(std::string_view text) {
  return text.find("scheduling") != std::string_view::npos ||
         text.find('\\') != std::string_view::npos;
}

}  // namespace

JobCharge chargeOf(std::string_view spec_text, const catalog::SlurmSite& site) {
  JobCharge charge{site.account, site.qos};
  // Decided on the parsed spec, never on its text: a key spelled with an escape reads as
  // spec.scheduling all the same (issue 45). Only a text that cannot choose is not parsed.
  if (!mayChooseCharge(spec_text)) return charge;
  const spec::PartialSpec parsed = spec::parsePartialJobSpec(spec_text);
  if (parsed.spec.scheduling.account) charge.account = parsed.spec.scheduling.account;
  if (parsed.spec.scheduling.qos) charge.qos = parsed.spec.scheduling.qos;
  return charge;
}

Checked<std::string> chargeSpec(std::string_view spec_text, const Principal& who) {
  // What the spec chooses is what its parsed form says, whatever the spelling of its keys (a
  // text search for "scheduling" alone missed escaped keys: issue 45). Nothing to check or
  // add: the common case costs no parse.
  const bool has_defaults = !who.slurm_accounts.empty() || !who.qos.empty();
  if (!has_defaults && !mayChooseCharge(spec_text)) return std::string(spec_text);
  const spec::PartialSpec parsed = spec::parsePartialJobSpec(spec_text);
  if (!parsed.readable("spec.scheduling")) return std::string(spec_text);
  const spec::Scheduling& chosen = parsed.spec.scheduling;
  Errors errors;
  if (auto e = judge(chosen.account, who.slurm_accounts, who.user, "account",
                     "api.account_not_allowed", "slurm_account")) {
    errors.push_back(*e);
  }
  if (auto e = judge(chosen.qos, who.qos, who.user, "qos", "api.qos_not_allowed", "qos")) {
    errors.push_back(*e);
  }
  if (!errors.empty()) return failAll(std::move(errors));

  std::optional<std::string> add_account;
  std::optional<std::string> add_qos;
  if (!chosen.account && !who.slurm_accounts.empty()) add_account = who.slurm_accounts.front();
  if (!chosen.qos && !who.qos.empty()) add_qos = who.qos.front();
  if (!add_account && !add_qos) return std::string(spec_text);
  // A spec the parser cannot read whole keeps its text: its problems are reported as they are.
  if (!parsed.complete()) return std::string(spec_text);

  auto rewritten = withDefaults(spec_text, add_account, add_qos);
  // The new text must read as the old one plus the defaults, and nothing else.
  if (rewritten) {
    spec::PartialSpec again = spec::parsePartialJobSpec(*rewritten);
    spec::JobSpec expected = parsed.spec;
    if (add_account) expected.scheduling.account = add_account;
    if (add_qos) expected.scheduling.qos = add_qos;
    if (!again.complete() || !(again.spec == expected)) rewritten.reset();
  }
  if (!rewritten) {
    const bool account = add_account.has_value();
    return failAll(
        {Error{"api.charge_not_added", account ? "spec.scheduling.account" : "spec.scheduling.qos",
               "the default " + std::string(account ? "account" : "qos") + " of " + who.user +
                   " (" + (account ? *add_account : *add_qos) +
                   ") cannot be written into this spec's text (an anchor or a tag on spec or "
                   "spec.scheduling): name spec.scheduling." +
                   (account ? "account" : "qos") + " yourself"}});
  }
  return *rewritten;
}

}  // namespace tuneplane::api
