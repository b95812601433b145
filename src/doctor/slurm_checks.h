// Doctor's judgements of the connection to Slurm, pure functions over SlurmFacts and
// TokenFacts:
//   slurmrestd   GET /slurm/v0.0.45/ping/ got an HTTP answer (release and cluster reported)
//   slurmctld    every controller in the ping answers `responding` (some down → warn)
//   api_version  the v0.0.45 ping route answered 200 with `pings[]` — slurmrestd serves a
//                route only for a data parser it loaded — and meta.plugin.data_parser says
//                data_parser/v0.0.45 (another value → warn); HTTP 404 → fail
//   token        readable, a JWT, not expired, not about to expire (< kTokenExpiryWarning
//                left → warn), and accepted by slurmrestd; minted tokens report their lifespan
// Each says what it found and how to fix it; a token never appears in any of them.
#pragma once

#include <chrono>

#include "doctor/check.h"
#include "doctor/facts.h"

namespace tuneplane::doctor {

// A token file with less than this left gets a warning: a job polled after it expires
// cannot be followed until someone renews the file.
inline constexpr std::chrono::seconds kTokenExpiryWarning{3600};

CheckResult checkSlurmrestd(const SlurmFacts& facts);
CheckResult checkControllers(const SlurmFacts& facts);
CheckResult checkApiVersion(const SlurmFacts& facts);
CheckResult checkToken(const TokenFacts& token, const SlurmFacts& facts);

// Why slurmrestd's answers about the cluster cannot be judged (no answer, token refused),
// or nullopt when the ping succeeded. Used by the checks that need partitions and nodes.
std::optional<std::string> whyNoClusterFacts(const SlurmFacts& facts);

}  // namespace tuneplane::doctor
