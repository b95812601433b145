// The stable error codes of the launch pipeline. They keep the "cli." prefix they were
// published with (the pipeline began as the CLI's): scripts match on these strings, so a
// code is never renamed or reused for another meaning.
#pragma once

namespace tuneplane::pipeline::codes {

inline constexpr const char* kNoSite = "cli.no_site";  // neither --site nor the variable
inline constexpr const char* kInvalidAttempt = "cli.invalid_attempt";
inline constexpr const char* kInvalidJobId = "cli.invalid_job_id";
inline constexpr const char* kInvalidSubmitToken = "cli.invalid_submit_token";
inline constexpr const char* kInvalidAttemptDir = "cli.invalid_attempt_dir";

}  // namespace tuneplane::pipeline::codes
