// Choosing the REST API version to speak (slurm.api_version): a named version is taken as
// configured; `auto` (the default) is the newest version both TunePlane (slurm_api.h) and the
// server speak. What the server speaks is read from its OpenAPI document — GET /openapi/v3
// (authenticated) lists a /slurm/<version>/… path for every data parser slurmrestd loaded,
// and its Slurm release (tests/data/slurm/v0.0.44/transcripts*/18_version_discovery) — or,
// where that document is not served, from a ping per version (an unserved version's ping
// answers 404). The I/O is SlurmRestClient::negotiate's (rest_client.h); the decisions here
// are pure. Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "slurm/slurm_api.h"

namespace tuneplane::slurm {

// The server speaks none of the versions TunePlane speaks (or not the one configured).
inline constexpr std::string_view kErrNoCommonApi = "slurm.no_common_api";

// What slurmrestd's OpenAPI document says it serves.
struct OfferedApis {
  std::vector<std::string> versions;  // "v0.0.43", "v0.0.44", …: every /slurm/<v>/ path prefix
  std::string release;                // info.x-slurm.release, e.g. "25.11.7"; "" when absent
};

// Reads GET /openapi/v3's answer: the versions of its `/slurm/<v>/job/submit` paths (a
// slurmrestd without openapi/slurmctld has none), else of info.x-slurm.data_parsers.
// Errors: "slurm.bad_response" when `document` is not an OpenAPI document.
Result<OfferedApis> offeredApis(std::string_view document);

// The version to speak. `configured` "auto": the newest of slurmApis() in `offered`; a
// version name: that one, when offered. Errors: kErrNoCommonApi (field slurm.api_version)
// naming what the server offers and what TunePlane speaks; "slurm.config" for a `configured`
// TunePlane does not know.
Result<const SlurmApi*> chooseSlurmApi(std::string_view configured,
                                       const std::vector<std::string>& offered);

// The choice a client made, for the log, doctor, /v1/capabilities and the console.
struct ApiChoice {
  const SlurmApi* api = nullptr;
  std::string configured;            // slurm.api_version: "auto" or a version
  std::vector<std::string> offered;  // what the server serves; empty when not asked
  std::string release;               // the server's Slurm release, when it said
  std::string how;                   // how `offered` was learned, for people
};

// One line for the log: "REST API v0.0.44 (slurm.api_version: auto; slurmrestd serves
// v0.0.44, Slurm 25.11.7; TunePlane speaks v0.0.44, v0.0.45)".
std::string describeChoice(const ApiChoice& choice);
// {"configured", "version", "negotiated", "offered", "release", "degradations": [{what,
// instead}]} — "version" null and "negotiated" false until a version is chosen.
nlohmann::json choiceJson(const std::string& configured, const ApiChoice* choice);

}  // namespace tuneplane::slurm
