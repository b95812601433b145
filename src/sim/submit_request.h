// Parsing and checking a POST /job/submit body the way slurmrestd + slurmctld do (order of
// checks, error numbers and messages from transcripts 02, 11b and 13c of 26.05.3 and 25.11.7:
// the version decides which fields draw an "unknown field" warning, the release the status of
// a refusal and the number of a missing environment; who submits, from 19 and 20: a user no
// host knows, an account or QoS the cluster's associations refuse).
// Pure: no I/O, no clock. The Simulator turns the outcome into jobs and responses.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/api_error.h"
#include "sim/cluster.h"
#include "sim/job.h"
#include "sim/sim_api.h"

namespace tuneplane::sim {

struct SubmitPlan {
  std::vector<JobRequest> components;  // 1 for a plain job, N for a het job
  bool het = false;                    // submitted with `jobs: [...]`
  nlohmann::json warnings = nlohmann::json::array();
  // Accepted but can never start as asked (e.g. more CPUs than any node): PENDING with
  // this reason and the two "not available now" warnings, as 13c shows.
  std::string pending_reason;
};

// What a rejected submit leaves behind, besides its error (13c: 2014 leaves a FAILED
// record; 11b: a het job with a bad component leaves a CANCELLED leader).
enum class Leftover { kNone, kFailedRecord, kCancelledLeader };

struct SubmitRejection {
  ApiError error;
  Leftover leftover = Leftover::kNone;
  std::vector<JobRequest> components;  // for the leftover record
};

struct SubmitOutcome {
  bool accepted = false;
  SubmitPlan plan;
  SubmitRejection rejection;
};

// Who submits: the user the request acts as (identity.h), and whether any host knows them.
struct Submitter {
  std::string user;
  bool known = true;  // false → refused 500, error 6010, once slurmrestd has parsed the body
};

// `body` is already valid JSON (malformed JSON is the caller's 400). `api`: the version the
// body came in; `release`: the server's. The two-argument form: v0.0.45 on 26.05.3, by a
// known user named "". Each accepted component's `charge` is set: by the cluster's
// associations when it has them (a refusal: 2045, 2066), else as named.
SubmitOutcome planSubmit(const nlohmann::json& body, const ClusterConfig& cluster,
                         const SimApi& api, const SimRelease& release, const Submitter& who = {});
SubmitOutcome planSubmit(const nlohmann::json& body, const ClusterConfig& cluster);

// "gres/gpu:2", "gres/gpu:h100:2" → count and type; 0 when no GPU is asked.
int parseGpuTres(const std::string& tres, std::string* type);
// Feature expression of `constraints` ("a", "a&b", "a|b") against one node's features.
bool featuresMatch(const std::string& constraints, const std::vector<std::string>& features);

}  // namespace tuneplane::sim
