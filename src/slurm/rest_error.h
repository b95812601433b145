// The one error type of the Slurm client: a project Error (stable `slurm.*` code, message)
// plus what a caller needs to decide what to do next — whether the request may have reached
// slurmrestd (the transport class), the HTTP status and Slurm's own error number and text.
// A SlurmError never carries a credential: messages are built from Slurm's answer, libcurl's
// error text (which does not include request headers) and our own words.
#pragma once

#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "common/result.h"
#include "http/transport.h"

namespace tuneplane::slurm {

// Whether the request may have been acted on, in the transport's words (http/transport.h).
// The reconciler's lost-submission rule rests on this: only kNotSent is safe to repeat for
// a submit.
using TransportClass = http::TransportClass;
using http::toString;

// Stable error codes (Error::code) of this module.
inline constexpr std::string_view kErrNotSent = "slurm.not_sent";
inline constexpr std::string_view kErrOutcomeUnknown = "slurm.outcome_unknown";
inline constexpr std::string_view kErrAuthFailed = "slurm.auth_failed";
inline constexpr std::string_view kErrTokenUnavailable = "slurm.token_unavailable";
inline constexpr std::string_view kErrRejected = "slurm.rejected";          // 4xx, or errors[]
inline constexpr std::string_view kErrServerError = "slurm.server_error";   // 5xx
inline constexpr std::string_view kErrJobNotFound = "slurm.job_not_found";  // 2017
inline constexpr std::string_view kErrAlreadyCompleting = "slurm.already_completing";  // 2021
inline constexpr std::string_view kErrBadResponse = "slurm.bad_response";  // undecodable body
inline constexpr std::string_view kErrConfig = "slurm.config";             // bad client options

// Slurm error numbers the client gives meaning to.
inline constexpr int kSlurmAuthError = 1007;        // "Protocol authentication error"
inline constexpr int kSlurmInvalidJobId = 2017;     // "Invalid job id specified"
inline constexpr int kSlurmAlreadyComplete = 2021;  // "Job/step already completing or completed"
// slurmctld does not know the user a request acts for (X-SLURM-USER-NAME, or a token's sun):
// "Rejecting authentication of user nobody or group nobody", HTTP 500 (transcript
// 19_identity). Not the token's fault: refreshing it changes nothing, and nothing was done.
inline constexpr int kSlurmUserUnknown = 6010;
// slurmrestd could not hand the request to slurmctld at all, so slurmctld did nothing with
// it (a submit made no job): "Unable to contact slurm controller (connect failure)", and
// slurmctld's rate limiter turning the RPC away unread. (1801 "send failure" and 1802
// "receive failure" are not here: a message may have arrived whole before the failure.)
inline constexpr int kSlurmControllerConnectFailure = 1800;
inline constexpr int kSlurmControllerBackoff =
    1804;  // "Rate limit exceeded, please retry momentarily"
inline constexpr int kSlurmControllerHardDrop = 1805;  // "Rate limit exceeded, please retry later"

// Whether Slurm's error number says slurmctld never took the request (the numbers above).
bool neverReachedController(int slurm_error_number);

struct SlurmError {
  Error error;  // code is one of the kErr* above; field names the operation
  TransportClass transport = TransportClass::kRejected;
  int http_status = 0;         // 0 when no HTTP answer came back
  int slurm_error_number = 0;  // errors[0].error_number / status[0].error.code; 0 if none
  std::string slurm_error;     // Slurm's short text for that number
  std::string slurm_description;
  int curl_code = 0;  // CURLcode when the transport failed, else 0
  // HTTP requests sent for this call, retries and a token refresh included. 0 when not
  // counted: no request was sent (no token), or an answer came back but could not be read.
  int attempts = 0;

  // One line for people: "op: message [code] (HTTP 422, slurm 2014 …)".
  std::string describe() const;
};

template <typename T>
using SlurmResult = tl::expected<T, SlurmError>;
using SlurmStatus = SlurmResult<void>;

inline tl::unexpected<SlurmError> slurmFail(SlurmError error) {
  return tl::unexpected<SlurmError>(std::move(error));
}
SlurmError makeSlurmError(std::string_view code, std::string field, std::string message,
                          TransportClass transport);

}  // namespace tuneplane::slurm
