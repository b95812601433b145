// Name and duration rules shared by the spec, site and registry formats: DNS labels,
// environment variable names, and durations such as "90m", "2h", "1h30m", "500ms".
// Pure functions over strings.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace tuneplane::spec {

inline constexpr std::size_t kMaxDnsLabel = 63;

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters (RFC 1123 label, as Kubernetes).
bool isDnsLabel(std::string_view name);

// A Kubernetes label key: an optional DNS-subdomain prefix and '/', then a name of at most 63
// characters, [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?.
bool isLabelKey(std::string_view key);

// A Slurm account or QOS name as TunePlane accepts it: 1..64 of [A-Za-z0-9_.-] — what
// sacctmgr creates, and nothing a batch script or a JSON body could misread.
bool isSlurmName(std::string_view name);

// [A-Za-z_][A-Za-z0-9_]* — what a shell and `env` accept as a variable name.
bool isEnvName(std::string_view name);

// Names the platform sets itself (TUNEPLANE_*), that Slurm owns (SLURM_*), or that the batch
// script keeps its own state in (tp_*: the renderer refuses them, so a spec that passed
// validation must not hold one); a user's value there would be overwritten, confuse srun, or
// replace what the script runs.
bool isReservedEnvName(std::string_view name);

// "1d", "2h", "90m", "45s", "500ms" and concatenations in that order ("1h30m"), each unit at
// most once. Empty, unitless, out-of-order or longer than 10 years → nullopt.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text);

}  // namespace tuneplane::spec
