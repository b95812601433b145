// A REST API version as the simulator serves it, one folder per version —
// src/sim/versions/v0_0_NN/ (its records' shapes copied from a real slurmrestd's answers, its
// submit fields and route names from the version's real OpenAPI document), found by the build:
// serving v0.0.46 is one new folder. A version also names the Slurm release whose newest API
// it is, and how that release behaves where releases differ (SimRelease): a simulator that
// serves v0.0.44 alone acts as Slurm 25.11.7, one that serves v0.0.45 as 26.05.3 (serving
// v0.0.44 beside it, as 26.05 does). The shapes and behaviours are proven against both sets of
// real transcripts (tests/sim/conformance_test.cc). Thread-safety: immutable after first use.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tuneplane::sim {

// Where Slurm releases differ in what the simulator shows.
struct SimRelease {
  std::string release;  // "25.11.7"
  std::string major, minor, micro;
  // A SLUID in /job/{id} (GET, DELETE, POST) names the job (26.05); or the path is refused,
  // 422 with error 9000, as Slurm 25.11 does: its paths take numeric ids only.
  bool sluid_paths = true;
  // /jobs/state/?job_id=<SLUID>: ignored (26.05) or refused 422/9000 (25.11).
  bool sluid_state_filter_ignored = true;
  // HTTP status of a submit slurmctld refused (its error number in errors[]): 26.05 422,
  // 25.11 500 — and the error number for a component without `environment` (2127, 2019).
  int refusal_status = 422;
  int missing_environment_error = 2127;
  // SLURM_JOB_SLUID in the batch step's environment (25.11 leaves it empty).
  bool sluid_in_batch_env = true;
};

struct SimApi {
  std::string name;                     // "v0.0.44": routes /slurm/<name>/…
  nlohmann::json job_template;          // a real GET /job/{id} record of this version
  nlohmann::json node_template;         // a real /nodes/ record
  nlohmann::json partition_template;    // a real /partitions/ record
  nlohmann::json meta_template;         // a real answer's `meta`
  nlohmann::json ping_template;         // a real pings[] entry of a responding controller
  std::set<std::string> submit_fields;  // <name>_job_desc_msg's properties
  std::vector<std::string> paths;       // the paths of its OpenAPI document
  SimRelease release;                   // the release whose newest REST API this is

  bool isJobDescField(const std::string& field) const { return submit_fields.count(field) > 0; }
  // A pings[] entry: the template, responding or (a refused token) not, in this version's
  // words (`status` where it has one, `pinged` where it has that).
  nlohmann::json pingEntry(bool responding) const;
  // `meta` of an answer of this version from a server of `release`.
  nlohmann::json meta(const SimRelease& release, const std::string& client_source,
                      const std::string& cluster) const;
};

// Every version the simulator can serve, oldest first.
const std::vector<const SimApi*>& simApis();
const SimApi* findSimApi(std::string_view name);

// GET /openapi/v3 of a server of `release` serving `served` (oldest first): `openapi`, `info`
// (x-slurm: data_parsers, release) and `paths` — each path's operations left out (a simulator
// documents no schemas; clients read the path names and info).
nlohmann::json openApiDocument(const std::vector<const SimApi*>& served, const SimRelease& release);

}  // namespace tuneplane::sim
