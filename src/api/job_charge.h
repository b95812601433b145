// Teams and fair share: the Slurm account and QOS a job is charged to. Every job runs as
// the site's one slurm.user, so without this Slurm's fair share and accounting would see one
// service account. A token's user may carry the accounts and QOS its jobs may be charged to
// (server.tokens[].slurm_account, .qos; the first of each is the default); a spec may choose
// among them (spec.scheduling.account, .qos). On POST /v1/jobs the choice is checked, and
// when the spec names none the user's default is written into the spec before it is stored,
// so the stored spec says what the job is charged to and every attempt is charged the same,
// whatever the tokens say later. A user without accounts in the site file gets the site's
// slurm.account / slurm.qos, and a spec of theirs may not choose. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/authenticator.h"
#include "catalog/site_config.h"
#include "common/result.h"

namespace tuneplane::api {

struct JobCharge {
  std::optional<std::string> account = std::nullopt;
  std::optional<std::string> qos = std::nullopt;

  bool operator==(const JobCharge&) const = default;
};

// What a stored job is charged to: its spec's spec.scheduling, else the site's defaults.
// Read from the parsed spec (an escaped key is the key it decodes to); a text without the word
// "scheduling" and without a backslash (no escape) cannot choose, and is not parsed.
JobCharge chargeOf(std::string_view spec_text, const catalog::SlurmSite& site);

// The spec text to validate and store for `who` (POST /v1/jobs, /v1/validate): unchanged
// when the spec chose (and may), or the user has no default; else with the defaults added to
// spec.scheduling (only that: the rest of the text, its comments included, stays as sent).
// A spec that cannot be read is returned unchanged: the validator names its problems.
// Errors (422): "api.account_not_allowed" (field spec.scheduling.account),
// "api.qos_not_allowed" (spec.scheduling.qos), both naming what the user may choose;
// "api.charge_not_added" when the default cannot be written into this spec's text (an anchor
// or a tag on spec or spec.scheduling): the user names it in the spec instead.
Checked<std::string> chargeSpec(std::string_view spec_text, const Principal& who);

}  // namespace tuneplane::api
