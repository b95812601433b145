// The text forms of the API's objects: the `get` and `events` tables and the `describe`
// page (readable like `kubectl describe`: the job, why it waits in Slurm's queue and until
// when, each attempt with its components — Slurm job ids, SLUIDs, states, reasons, exit
// codes, nodes — and the recent events).
// On a terminal, times are relative to `now_ms` ("5m 3s ago") and tables aligned; for a
// pipe, times are the API's RFC 3339 text and tables tab-separated (describe stays
// aligned: it is for reading, -o json is for scripts). Pure, so goldens pin them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/api_objects.h"

namespace tuneplane::cli {

struct ViewOptions {
  int64_t now_ms = 0;
  bool terminal = false;
};

// How many events `describe` shows (the latest); `tuneplane events ID` shows them all.
inline constexpr size_t kDescribeEvents = 20;
// A reason longer than this is cut ("…") in a terminal's table; pipes get it whole.
inline constexpr size_t kTableReasonChars = 60;

// Why a job waits in Slurm's queue, in one line (the `get` table's REASON for such a job):
// "Priority: #3 of 7 in gpu, est. start in 12m". "" when it does not wait.
std::string waitingLine(const client::JobView& job, const ViewOptions& view);

// ID NAME OWNER PHASE ATTEMPTS CREATED REASON, one row per job ("No jobs found." if none);
// a job waiting in Slurm's queue shows waitingLine() as its reason.
std::string jobsTable(const std::vector<client::JobView>& jobs, const ViewOptions& view);
// SEQ TIME ATTEMPT FROM TO ACTOR REASON.
std::string eventsTable(const std::vector<client::EventView>& events, const ViewOptions& view,
                        const std::string& indent = "");
std::string describeJob(const client::JobView& job, const std::vector<client::EventView>& events,
                        const ViewOptions& view);

}  // namespace tuneplane::cli
