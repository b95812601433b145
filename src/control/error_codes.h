// The stable error codes of the control module (and the codes of other modules that the
// control loop branches on, named where they are made: staging/error_codes.h,
// catalog/error_codes.h, attempt/error_codes.h). Scripts and tests match on these strings, so a
// code is never renamed or reused for another meaning.
#pragma once

namespace tuneplane::control::codes {

inline constexpr const char* kIllegalTransition = "control.illegal_transition";  // ChangeBuilder
inline constexpr const char* kNoOwner = "control.no_owner";    // JobService::submit
inline constexpr const char* kNoReason = "control.no_reason";  // JobService::abandon
// JobService::submit with a key: the owner's Idempotency-Key was bound to a request with
// another body (POST /v1/jobs answers 409).
inline constexpr const char* kIdempotencyKeyReused = "control.idempotency_key_reused";

}  // namespace tuneplane::control::codes
