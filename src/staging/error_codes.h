// Stable error codes of the staging module that other modules branch on. Never renamed or
// reused for another meaning.
#pragma once

namespace tuneplane::staging::codes {

// The filesystem failed (a write, a rename, a chmod): may pass, so worth trying again.
inline constexpr const char* kIo = "staging.io";
inline constexpr const char* kAttemptExists = "staging.attempt_exists";

}  // namespace tuneplane::staging::codes
