// Stable error codes of artifact verification (artifact_verifier.h) that other modules
// branch on. Never renamed or reused for another meaning.
#pragma once

namespace tuneplane::catalog::codes {

inline constexpr const char* kArtifactMissing = "artifact.missing";
inline constexpr const char* kArtifactNotRegularFile = "artifact.not_regular_file";
// The file could not be read (I/O error, permissions): may pass, so worth trying again.
inline constexpr const char* kArtifactUnreadable = "artifact.unreadable";
inline constexpr const char* kArtifactSha256Mismatch = "artifact.sha256_mismatch";

}  // namespace tuneplane::catalog::codes
