// The store's reads, as functions over one connection. Each expects the caller to hold a
// read transaction (Transaction::Kind::kRead) when it runs several queries, so what it
// returns is one consistent snapshot even while the writer commits. Every value comes from
// the caller as a bound parameter; the only SQL assembled at run time is listJobs', from
// fixed fragments chosen by which filters are set.
// Thread-safety: none beyond the Connection's (one thread at a time).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/job_store.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

// The condition that selects active (non-terminal) jobs. It is, term for term, the WHERE of
// the partial index jobs_active, which is what lets SQLite use that index.
inline constexpr const char* kActiveJobsCondition =
    "j.phase NOT IN ('Succeeded', 'Failed', 'Cancelled')";

inline constexpr int kMinListLimit = 1;
inline constexpr int kMaxListLimit = 1000;

// The active-jobs queries (jobs, their labels, their attempts with components), oldest job
// first; tests check that each is driven by the jobs_active index.
const std::string& activeJobsSql();
const std::string& activeLabelsSql();
const std::string& activeAttemptsSql();
// The queries of readActiveJobsSince: the jobs written after ?1 (id, whether active, seq),
// then the active ones among them with their labels and attempts; driven by jobs_by_change.
const std::string& changedJobsSql();
const std::string& changedActiveJobsSql();
const std::string& changedActiveLabelsSql();
const std::string& changedActiveAttemptsSql();
// The listing query for the filters set in `query` (and a keyset position when `after`),
// made of fixed fragments only: every value is a named parameter (:owner, :phase, :name,
// :label_key, :label_value, :after_created, :after_id, :limit). Newest first.
std::string listJobsSql(const JobQuery& query, bool after);

// The statement readJobView runs: the job, its labels and its attempts with their
// components in one statement (rows told apart by their first column).
const std::string& jobViewSql();
// One statement: a consistent snapshot without a transaction around it.
Result<std::optional<JobView>> readJobView(Connection& connection, const std::string& id);
Result<std::vector<JobView>> readActiveJobs(Connection& connection);
// The newest change sequence of any job (0 for none).
Result<int64_t> readChangeSeq(Connection& connection);
// What changed among the active jobs after `since_seq` (ActiveJobsDelta, full = false).
Result<ActiveJobsDelta> readActiveJobsSince(Connection& connection, int64_t since_seq);
// Errors: "store.bad_limit", "store.bad_continue", and those of any read.
Result<JobPage> readJobPage(Connection& connection, const JobQuery& query);
Result<std::vector<EventRecord>> readEvents(Connection& connection, const std::string& job_id);
Result<std::map<JobPhase, int64_t>> readPhaseCounts(Connection& connection);
// Attempts in a terminal phase, by (phase, cause). A scan of the attempts table: /metrics
// reads it once per scrape.
Result<std::map<std::pair<AttemptPhase, EndCause>, int64_t>> readEndedAttemptCounts(
    Connection& connection);

}  // namespace tuneplane::store
