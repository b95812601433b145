// Doctor's judgements of the connection to Slurm, pure functions over SlurmFacts and
// TokenFacts:
//   slurmrestd   GET /slurm/<version>/ping/ got an HTTP answer (release and cluster reported)
//   slurmctld    every controller in the ping answers `responding` (some down → warn)
//   api_version  the REST API version TunePlane speaks here — slurm.api_version, or the newest
//                both sides speak (auto: from the server's OpenAPI document) — and its ping
//                route answered 200 with `pings[]` naming data_parser/<version> (another
//                parser → warn); a version on which TunePlane degrades (slurm_api.h:
//                v0.0.44, no SLUID in paths) → warn, saying what degrades; a server that
//                speaks none of TunePlane's versions, or HTTP 404 for the route → fail
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
