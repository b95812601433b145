// EventLog: the structured log of `tuneplane serve` — one JSON object per job or attempt
// transition and one per failed slurmrestd call, handed to a sink (serve writes each as one
// line on stderr, cli/log_format.h). Records are built from named fields only, never from a
// request or its headers, so no credential can reach them (SlurmError is scrubbed of the
// token where it is made, slurm/rest_error.h). Field names are stable: scripts parse them.
// Thread-safety: as the sink's (serve's is thread-safe); the record builders are pure.
// dumpRecord() writes one as a single line (invalid UTF-8 replaced, never a throw).
#pragma once

#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "slurm/rest_error.h"
#include "store/job_store.h"

namespace tuneplane::server {

// A record keeps its fields in the order written (time, level, event first), for people.
using LogRecord = nlohmann::ordered_json;

// {"time","level":"info","event":"transition","job","attempt" (null: the job itself),
//  "from" (null: created),"to","reason","actor","msg"}; time is the transition's own.
LogRecord transitionRecord(const store::EventRecord& event);
// {"time","level":"warning","event":"slurm_error","operation","code","message",
//  "http_status","slurm_error_code","slurm_error","slurm_description","transport",
//  "attempts","msg"}; numbers that are unknown (0) are null.
LogRecord slurmErrorRecord(std::string_view operation, const slurm::SlurmError& error,
                           int64_t now_ms);

std::string dumpRecord(const LogRecord& record);

class EventLog {
 public:
  using Sink = std::function<void(const LogRecord& record)>;

  // An empty sink logs nothing. REQUIRES: `clock` outlives the log.
  EventLog(Sink sink, const Clock& clock) : sink_(std::move(sink)), clock_(clock) {}

  void transition(const store::EventRecord& event) const;
  void slurmError(std::string_view operation, const slurm::SlurmError& error) const;

 private:
  Sink sink_;
  const Clock& clock_;
};

}  // namespace tuneplane::server
