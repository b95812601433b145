// Typed, read-only views of the /v1 API's objects (job, attempt, component, event, logs),
// for the parts of the CLI that need to look inside them: the tables, `describe`, and the
// polling loops. `-o json|yaml` print the server's JSON itself, never these.
// Reading is tolerant: a member that is absent, null or of another type reads as unset
// (a newer server may add or drop members); only `id`/`phase` of a job and the logs'
// `content` are required. Pure; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/api_client.h"
#include "common/result.h"

namespace tuneplane::client {

struct ComponentView {
  int index = 0;
  std::string pool;
  std::optional<int64_t> job_id;  // Slurm's numeric id
  std::string sluid;
  std::vector<std::string> state;  // Slurm's state list, e.g. ["COMPLETED"]
  std::string reason;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string nodes;
  std::optional<std::string> start_time;  // RFC 3339
  std::optional<std::string> end_time;
  // When Slurm chose to preempt it; while it runs, it is in the grace time that ends at
  // end_time. Absent when it was not preempted (or the server is older).
  std::optional<std::string> preempt_time;
};

struct AttemptView {
  int number = 0;
  std::string phase;
  std::string reason;
  std::string cause;
  std::string submit_token;
  std::string staging_dir;
  std::optional<int64_t> job_id;
  std::optional<std::string> created;
  std::optional<std::string> submitted;
  std::optional<std::string> ended;
  int64_t lookups = 0;
  std::optional<std::string> abandoned_by;
  std::optional<std::string> abandon_reason;
  // The step the attempt started from, when its framework says (LlamaFactory: its highest
  // checkpoint); absent otherwise.
  std::optional<int64_t> resume_from_step;
  std::vector<ComponentView> components;

  bool terminal() const;  // by phase::AttemptPhase; an unknown phase is not terminal
};

// One pending component of a job that waits in Slurm's queue (the API's ComponentWaiting).
struct ComponentWaitingView {
  std::string pool;         // "" in a list item
  std::string reason;       // Slurm's code
  std::string reason_text;  // in words; "" when the server has none
  std::string partition;
  std::optional<std::string> estimated_start;  // RFC 3339; Slurm's estimate
  std::optional<int> position;
  std::optional<int> pending_in_partition;
};

// Why a job waits in Slurm's queue, and until when (the API's `waiting`).
struct WaitingView {
  int attempt = 0;
  std::optional<std::string> as_of;  // when Slurm's queue was read; unset: stored values
  std::vector<ComponentWaitingView> components;
};

struct JobView {
  std::string id;
  std::string name;
  std::string owner;
  std::vector<std::pair<std::string, std::string>> labels;  // in the server's order
  std::string phase;
  std::string reason;
  std::optional<std::string> created;
  std::optional<std::string> updated;
  bool cancel_requested = false;
  std::optional<std::string> cancel_requested_by;
  std::optional<std::string> next_attempt_at;
  // What Slurm charges the job to ("scheduling"; only in GET /v1/jobs/{id}).
  std::optional<std::string> slurm_account;
  std::optional<std::string> qos;
  // The code it ships ("workdir": {"reference": "sha256:…", "path"}; only in GET /v1/jobs/{id}).
  std::optional<std::string> workdir;          // "sha256:…"
  std::optional<std::string> workdir_path;     // where the job sees it: /workdir
  int attempt_count = 0;                       // the list's attempt_count, else attempts.size()
  int preemptions = 0;                         // attempts ended preempted (GET /v1/jobs/{id})
  std::optional<AttemptView> current_attempt;  // the list's summary, else the last attempt
  std::vector<AttemptView> attempts;           // only in GET /v1/jobs/{id}
  std::optional<WaitingView> waiting;          // while it waits in Slurm's queue

  bool terminal() const;   // Succeeded, Failed or Cancelled
  bool succeeded() const;  // Succeeded
  // The attempt numbered `number`, from attempts[] (or current_attempt).
  const AttemptView* attempt(int number) const;
};

struct EventView {
  int64_t seq = 0;
  std::optional<std::string> time;
  int attempt = 0;  // 0: the job itself
  std::string from;
  std::string to;
  std::string reason;
  std::string actor;
};

struct LogsView {
  int attempt = 0;
  std::string component;
  std::string stream;
  std::string content;
  bool truncated = false;  // the log has bytes before `content` that were left out
  uint64_t bytes = 0;      // the log file's size when it was read
  uint64_t lines = 0;      // lines in `content`
  std::optional<std::string> missing_reason;  // set when there is no such log (yet)
};

// Errors: "client.bad_response" (field names the member) for a non-object or a missing
// required member.
Result<JobView> jobFromJson(const Json& json);
Result<EventView> eventFromJson(const Json& json);
Result<LogsView> logsFromJson(const Json& json);
// The `items` of a list answer ({"items": [...]}); errors as above, field "items[i]…".
Result<std::vector<JobView>> jobsFromList(const Json& list);
Result<std::vector<EventView>> eventsFromList(const Json& list);

}  // namespace tuneplane::client
