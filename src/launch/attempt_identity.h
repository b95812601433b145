// Who an attempt is: TunePlane's job id (`<name>-<8 hex>`, still a DNS label), the 1-based
// attempt number, and the submit token (`tp-` + 32 hex, 128 random bits) that goes into the
// Slurm job's comment so a job whose submit receipt was lost can be found again.
// Randomness comes through RandomSource so tests can make identities deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "launch/launch_request.h"

namespace tuneplane::launch {

inline constexpr std::size_t kMaxJobIdLength = 63;    // a DNS label
inline constexpr std::size_t kJobIdSuffixHex = 8;     // "-" + 8 hex = 32 random bits
inline constexpr std::size_t kSubmitTokenBytes = 16;  // 128 bits → 32 hex digits
inline constexpr std::string_view kSubmitTokenPrefix = "tp-";

// Fills buffers with random bytes. Implementations are named by mechanism.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // Errors: "launch.random_failed" when no randomness could be had.
  virtual Status fill(std::span<std::uint8_t> out) = 0;
};

// OpenSSL RAND_bytes (a CSPRNG seeded by the OS). Thread-safe.
class OpenSslRandomSource final : public RandomSource {
 public:
  Status fill(std::span<std::uint8_t> out) override;
};

// A fresh identity for `attempt` of a job named `job_name` (metadata.name, a DNS label).
// The name is truncated (and any trailing '-' dropped) so the job id stays ≤ 63 characters.
// Errors: "launch.invalid_job_name", "launch.invalid_attempt" (attempt < 1),
// "launch.random_failed".
Result<AttemptIdentity> newAttemptIdentity(std::string_view job_name, int attempt,
                                           RandomSource& random);

// A DNS label of at most 63 characters that ends in "-" and 8 lower-case hex digits — the
// shape newAttemptIdentity makes. Such an id is safe as one path component.
bool isValidJobId(std::string_view job_id);

// "tp-" followed by exactly 32 lower-case hex digits.
bool isValidSubmitToken(std::string_view token);

// The job-level fence beside an attempt dir: <root>/jobs/<job_id>/fence for
// <root>/jobs/<job_id>/attempts/<n> (staging_paths.h draws the layout, staging/job_fence.h
// says what it is for). REQUIRES: `attempt_dir` has that shape.
std::string fenceDirFor(std::string_view attempt_dir);

}  // namespace tuneplane::launch
