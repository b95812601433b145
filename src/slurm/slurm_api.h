// A slurmrestd REST API version as TunePlane speaks it (v0.0.44, v0.0.45, …): everything
// that differs between versions, in one value per version, each defined in a folder of its
// own — src/slurm/versions/v0_0_NN/ (its code and its data, read from that version's real
// OpenAPI document) — which the build finds by itself: adding v0.0.46 is one new folder.
// The client (rest_client.h), doctor and the docs read a version only through this value;
// nothing else in the module compares version names.
//
// What a version decides: its routes' prefix; how its paths name a job (job_key.h: by SLUID,
// or by numeric id confirmed against the answer); whether its ping says why a controller
// does not respond; its job-state vocabulary and the fields its submit body may carry (both
// from its OpenAPI document, held to it by tests/slurm/api_versions_test.cc); and, in words,
// what TunePlane loses on it. The answers' shapes TunePlane reads are the same in every
// version it speaks (the decoders read both sets of real transcripts: answer_decoder.h), so
// the decoders are shared. Thread-safety: immutable values with static storage.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "slurm/job_key.h"

namespace tuneplane::slurm {

// `slurm.api_version: auto`: the newest version both TunePlane and the server speak.
inline constexpr std::string_view kAutoApiVersion = "auto";

// Something TunePlane relies on that a version does not give, and what it does instead.
struct Degradation {
  std::string_view what;     // "no SLUID in paths"
  std::string_view instead;  // what TunePlane does about it, for people (doctor, the docs)
};

struct SlurmApi {
  std::string_view name;  // "v0.0.44": the routes are /slurm/<name>/…
  JobAddressing addressing = JobAddressing::kBySluid;
  // Whether `pings[].status` says why a controller does not respond ("Protocol
  // authentication error"). When it does not, a ping that finds no controller responding
  // is checked by a request that does say it: GET <auth_probe>.
  bool ping_names_refusal = true;
  std::string_view auth_probe = "/licenses/";
  // Whether it has GET /conf (the controller's configuration: controller_config.h). Without
  // it the client says so without asking.
  bool controller_config = true;
  // v<name>_job_info.job_state's enum: base states, then flags (job_state.h holds every
  // name of every version).
  std::span<const std::string_view> job_states;
  // v<name>_job_desc_msg's properties: the fields a submit body may carry.
  std::span<const std::string_view> submit_fields;
  std::span<const Degradation> degradations;

  std::string route(std::string_view suffix) const;  // "/slurm/v0.0.44" + suffix
  bool hasSubmitField(std::string_view field) const;
};

// Every version TunePlane speaks, oldest first (the folders under versions/).
std::span<const SlurmApi* const> slurmApis();
// nullptr when TunePlane does not speak `name`.
const SlurmApi* findSlurmApi(std::string_view name);
// "v0.0.44, v0.0.45"
std::string slurmApiNames();
// Whether `name` is "auto" or a version TunePlane speaks.
bool isKnownApiVersion(std::string_view name);

// The body of POST /job/submit as `api` takes it: `body` (submit_body.h) with every field
// checked against the version. Errors: "slurm.config" naming the first field (`job.x` or
// `jobs[i].x`) the version does not have — sent, slurmrestd would only warn and ignore it.
Result<nlohmann::json> submitBodyFor(const SlurmApi& api, nlohmann::json body);

}  // namespace tuneplane::slurm
