// The idempotency_keys table (schema version 5): each row binds an owner's Idempotency-Key
// of POST /v1/jobs to the job its first request created and that request's body hash, so a
// retry of the same request finds the same job and another request under the same key is
// told apart (control/job_service.h decides; the store only keeps). A key is written only
// in the transaction that creates its job: a refused request binds nothing. The retention
// is the caller's: reads ignore rows older than the `not_before_ms` they are given, and a
// keyed insert first deletes every row older than its `expired_before_ms`.
// Thread-safety: none beyond the Connection's; the writes run in the caller's write
// transaction, which is serialized against every other writer (sql_job_store.h), so the
// check-then-insert below cannot race another keyed submit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "store/job_store.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

// The owner's key bound at or after `not_before_ms`; nullopt when none.
Result<std::optional<IdempotencyRecord>> readIdempotencyKey(Connection& connection,
                                                            const std::string& owner,
                                                            const std::string& key,
                                                            int64_t not_before_ms);

// Deletes the keys created before `expired_before_ms`, then inserts the new job
// (insertNewJob) and `key` bound to it. REQUIRES: a write transaction.
// Errors: "store.key_exists" (checked before anything is written), "store.invalid" (an
// empty owner or key, or a key for another job than `job`), insertNewJob's.
Status insertKeyedJob(Connection& connection, const JobRecord& job, const EventRecord& created,
                      const IdempotencyRecord& key, int64_t expired_before_ms);

}  // namespace tuneplane::store
