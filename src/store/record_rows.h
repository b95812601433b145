// Rows ↔ records: the column lists the store selects, the decoders that turn a row into a
// JobRecord / AttemptRecord / ComponentRecord / EventRecord, and the encoding of the one
// composite column (a component's Slurm state list, stored as a JSON array of strings).
// A stored value this build cannot read (an unknown phase string, a state that is not a
// JSON list) is "store.corrupt" naming the table and column — reported, never guessed.
// Thread-safety: pure functions over a Query the caller owns.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "store/job_store.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

// The columns each decoder reads, in order, starting at the column it is given.
inline constexpr const char* kJobColumns =
    "j.id, j.name, j.owner, j.spec, j.phase, j.reason, j.created_ms, j.updated_ms, "
    "j.next_attempt_ms, j.cancel_requested, j.cancel_requested_by, j.version, j.change_seq, "
    "j.run_as";
inline constexpr int kJobColumnCount = 14;
inline constexpr const char* kAttemptColumns =
    "a.job_id, a.number, a.phase, a.reason, a.cause, a.submit_token, a.staging_dir, "
    "a.slurm_job_id, a.created_ms, a.submitted_ms, a.ended_ms, a.lookups, a.next_lookup_ms, "
    "a.missing_polls, a.abandon_requested, a.abandoned_by, a.abandon_reason";
inline constexpr int kAttemptColumnCount = 17;
inline constexpr const char* kComponentColumns =
    "c.idx, c.pool, c.slurm_job_id, c.sluid, c.state, c.reason, c.exit_code, c.signal, "
    "c.nodes, c.start_time, c.end_time, c.preempt_time";
inline constexpr int kComponentColumnCount = 12;
inline constexpr const char* kEventColumns =
    "seq, job_id, attempt, time_ms, from_phase, to_phase, reason, actor";

// Labels are not in the jobs row; the result's labels are empty.
Result<JobRecord> readJob(const Query& row, int first);
// Components are not in the attempts row; the result's components are empty.
Result<AttemptRecord> readAttempt(const Query& row, int first);
Result<ComponentRecord> readComponent(const Query& row, int first);
EventRecord readEvent(const Query& row);

std::string encodeState(const std::vector<std::string>& state);
Result<std::vector<std::string>> decodeState(const std::string& text);

// Slurm's numeric ids are unsigned; SQLite's integers are signed 64-bit. Stored bit for bit,
// so every uint64_t survives (Slurm's are 32-bit, which read the same either way).
inline int64_t toStored(uint64_t id) {
  return static_cast<int64_t>(id);
}
inline uint64_t fromStored(int64_t value) {
  return static_cast<uint64_t>(value);
}

}  // namespace tuneplane::store
