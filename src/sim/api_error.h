// The error shapes slurmrestd answers with (v0.0.44 and v0.0.45 alike): an HTTP status plus one
// entry of `errors[]` ({description, error_number, error, source}) or a plain-text body. The
// strings are Slurm's own (slurm_strerror), as seen in tests/data/slurm/transcripts/.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tuneplane::sim {

struct ApiError {
  int http_status = 500;
  int error_number = 0;
  std::string description;
  std::string source;
  std::string text_body;  // non-empty → answer text/plain with this body instead of JSON

  nlohmann::json toJson() const;  // the errors[] entry
};

// slurm_strerror() for the numbers the simulator uses.
std::string slurmStrerror(int error_number);

inline constexpr int kErrRestInvalidQuery = 9000;
inline constexpr int kErrInvalidJobId = 2017;
inline constexpr int kErrAlreadyDone = 2021;
inline constexpr int kErrAuth = 1007;
inline constexpr int kErrInvalidFeature = 2029;
inline constexpr int kErrNodeConfigUnavailable = 2014;
inline constexpr int kErrInvalidPartition = 2000;
inline constexpr int kErrMissingEnvironment = 2127;
inline constexpr int kErrMissingCwd = 2063;
// Slurm 25.11's answer to a submit without `environment` (26.05: kErrMissingEnvironment).
inline constexpr int kErrWritingScript = 2019;
inline constexpr int kErrPartitionConfigNow = 2015;
inline constexpr int kErrAccessDenied = 2002;
// slurmctld's answer to a user no host knows (19_identity).
inline constexpr int kErrUserUnknown = 6010;
// 2045 (kErrInvalidAccount) and 2066 (kErrInvalidQos): accounting.h.

// slurmrestd's 404 text for a path it has no handler for: a version it does not serve
// (18_version_discovery), /slurmdb/ without openapi/slurmdbd (22_no_slurmdbd).
inline constexpr const char* kUnknownEndpointText =
    "Unable to find requested URL endpoint. Please query the '/openapi/v3' endpoint or visit "
    "'https://slurm.schedmd.com/rest_api.html' for the OpenAPI specification which includes a "
    "list of all possible slurmrestd endpoints.";

}  // namespace tuneplane::sim
