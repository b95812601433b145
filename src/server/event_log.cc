// See event_log.h.
#include "server/event_log.h"

#include "api/json_views.h"

namespace tuneplane::server {
namespace {

using json = LogRecord;

json numberOrNull(int value) {
  return value != 0 ? json(value) : json();
}

}  // namespace

LogRecord transitionRecord(const store::EventRecord& e) {
  const std::string attempt = e.attempt ? " attempt " + std::to_string(e.attempt) : "";
  return {{"time", api::timeJson(e.time_ms)},
          {"level", "info"},
          {"event", "transition"},
          {"job", e.job_id},
          {"attempt", numberOrNull(e.attempt)},
          {"from", e.from.empty() ? json() : json(e.from)},
          {"to", e.to},
          {"reason", e.reason},
          {"actor", e.actor},
          {"msg",
           "job " + e.job_id + attempt + ": " + (e.from.empty() ? "new" : e.from) + " -> " + e.to}};
}

LogRecord slurmErrorRecord(std::string_view operation, const slurm::SlurmError& e, int64_t now_ms) {
  return {{"time", api::timeJson(now_ms)},
          {"level", "warning"},
          {"event", "slurm_error"},
          {"operation", operation},
          {"code", e.error.code},
          {"message", e.error.message},
          {"http_status", numberOrNull(e.http_status)},
          {"slurm_error_code", numberOrNull(e.slurm_error_number)},
          {"slurm_error", e.slurm_error.empty() ? json() : json(e.slurm_error)},
          {"slurm_description", e.slurm_description.empty() ? json() : json(e.slurm_description)},
          {"transport", slurm::toString(e.transport)},
          {"attempts", numberOrNull(e.attempts)},
          {"msg", "slurmrestd " + std::string(operation) + " failed: " + e.describe()}};
}

std::string dumpRecord(const LogRecord& record) {
  return record.dump(-1, ' ', false, LogRecord::error_handler_t::replace);
}

void EventLog::transition(const store::EventRecord& event) const {
  if (sink_) sink_(transitionRecord(event));
}

void EventLog::slurmError(std::string_view operation, const slurm::SlurmError& error) const {
  if (sink_) sink_(slurmErrorRecord(operation, error, clock_.nowMs()));
}

}  // namespace tuneplane::server
