// See idempotency_keys.h.
#include "store/idempotency_keys.h"

#include "store/error_codes.h"
#include "store/job_writes.h"

namespace tuneplane::store {
namespace {

constexpr const char* kSelectKeySql =
    "SELECT owner, key, request_sha256, job_id, created_ms FROM idempotency_keys"
    " WHERE owner = ?1 AND key = ?2 AND created_ms >= ?3";
// The retention's prune: driven by idempotency_keys_by_age, it reads only what expired.
constexpr const char* kPruneKeysSql = "DELETE FROM idempotency_keys WHERE created_ms < ?1";
constexpr const char* kInsertKeySql =
    "INSERT INTO idempotency_keys (owner, key, request_sha256, job_id, created_ms)"
    " VALUES (?1, ?2, ?3, ?4, ?5)";

}  // namespace

Result<std::optional<IdempotencyRecord>> readIdempotencyKey(Connection& connection,
                                                            const std::string& owner,
                                                            const std::string& key,
                                                            int64_t not_before_ms) {
  auto q = connection.query(kSelectKeySql);
  if (!q) return fail(q.error());
  q->bind(1, owner).bind(2, key).bind(3, not_before_ms);
  auto row = q->step();
  if (!row) return fail(row.error());
  if (!*row) return std::optional<IdempotencyRecord>();
  IdempotencyRecord record{q->text(0), q->text(1), q->text(2), q->text(3), q->integer(4)};
  if (auto done = q->run(); !done) return fail(done.error());  // the primary key: one row
  return std::optional<IdempotencyRecord>(std::move(record));
}

Status insertKeyedJob(Connection& connection, const JobRecord& job, const EventRecord& created,
                      const IdempotencyRecord& key, int64_t expired_before_ms) {
  if (key.owner.empty() || key.key.empty()) {
    return fail(codes::kInvalid, "key", "an idempotency key needs an owner and a key");
  }
  if (key.job_id != job.id) {
    return fail(codes::kInvalid, "key.job_id", "the key must be bound to the new job");
  }
  {
    auto prune = connection.query(kPruneKeysSql);
    if (!prune) return fail(prune.error());
    prune->bind(1, expired_before_ms);
    if (auto done = prune->run(); !done) return done;
  }
  // Everything older was just deleted, so any row left is one the retention still keeps.
  auto bound = readIdempotencyKey(connection, key.owner, key.key, expired_before_ms);
  if (!bound) return fail(bound.error());
  if (*bound) {
    return fail(codes::kKeyExists, "Idempotency-Key",
                "the key is bound to job " + (*bound)->job_id + " already");
  }
  if (auto done = insertNewJob(connection, job, created); !done) return done;
  auto q = connection.query(kInsertKeySql);
  if (!q) return fail(q.error());
  q->bind(1, key.owner).bind(2, key.key).bind(3, key.request_sha256).bind(4, key.job_id);
  q->bind(5, key.created_ms);
  return q->run();
}

}  // namespace tuneplane::store
