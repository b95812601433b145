// The stable error codes of the control module (and the codes of other modules that the
// control loop branches on, named where they are made: staging/error_codes.h,
// catalog/error_codes.h). Scripts and tests match on these strings, so a code is never
// renamed or reused for another meaning.
#pragma once

namespace tuneplane::control::codes {

inline constexpr const char* kIllegalTransition = "control.illegal_transition";  // ChangeBuilder
inline constexpr const char* kStagedAttemptInvalid = "control.staged_attempt_invalid";
inline constexpr const char* kBadSentinel = "control.bad_sentinel";  // attempt_files.h
inline constexpr const char* kNoOwner = "control.no_owner";          // JobService::submit
inline constexpr const char* kNoReason = "control.no_reason";        // JobService::abandon

// The log reader's (log_tail.h). A symlink or a file that is not regular is the job's doing
// (it owns logs/), and the API answers it as a conflict, not a server fault.
inline constexpr const char* kLogsSymlink = "logs.symlink";
inline constexpr const char* kLogsNotRegularFile = "logs.not_regular_file";
inline constexpr const char* kLogsIo = "logs.io";
inline constexpr const char* kLogsInvalidPool = "logs.invalid_pool";
inline constexpr const char* kLogsInvalidAttemptDir = "logs.invalid_attempt_dir";

}  // namespace tuneplane::control::codes
