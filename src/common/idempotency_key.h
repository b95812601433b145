// The Idempotency-Key of POST /v1/jobs, in one place for the server and its clients: the
// header's name, the form a key must have, the header that marks a replayed answer, and a
// fresh key as the CLI makes one. What the server does with a key is
// control/job_service.h's (per user, kept 24 h, same body → the first job, another → 409).
// Pure, apart from newIdempotencyKey's randomness.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tuneplane {

inline constexpr const char* kIdempotencyKeyHeader = "Idempotency-Key";
// On an answer to a POST /v1/jobs whose key's first request created the job: "true".
inline constexpr const char* kIdempotentReplayedHeader = "Idempotent-Replayed";
// Room for a UUID, a ULID or a hash in hex, with a prefix of the client's.
inline constexpr std::size_t kMaxIdempotencyKeyBytes = 128;

// A key is 1 to kMaxIdempotencyKeyBytes characters of [A-Za-z0-9._:-] (what UUIDs, ULIDs
// and hex digests are made of; nothing a log, a header or a shell would read twice).
// Errors: "api.invalid_idempotency_key" (field "Idempotency-Key"), naming the rule.
Status checkIdempotencyKey(std::string_view key);

// 32 random lower-case hex digits (128 bits: no two clients' keys meet by chance).
// Errors: "common.random_failed" (the system's random generator failed).
Result<std::string> newIdempotencyKey();

}  // namespace tuneplane
