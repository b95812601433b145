#include "store/record_rows.h"
#include "store/error_codes.h"

#include <nlohmann/json.hpp>

namespace tuneplane::store {
namespace {

Error unreadable(std::string field, const std::string& value, const std::string& owner) {
  return Error{codes::kCorrupt, std::move(field),
               "stored value \"" + value + "\" of " + owner +
                   " is not one this TunePlane knows; the row was written by something else"};
}

}  // namespace

Result<JobRecord> readJob(const Query& row, int first) {
  JobRecord job;
  job.id = row.text(first + 0);
  job.name = row.text(first + 1);
  job.owner = row.text(first + 2);
  job.spec = row.text(first + 3);
  const std::string phase = row.text(first + 4);
  const auto parsed = parseJobPhase(phase);
  if (!parsed) return fail(unreadable("jobs.phase", phase, "job " + job.id));
  job.phase = *parsed;
  job.reason = row.text(first + 5);
  job.created_ms = row.integer(first + 6);
  job.updated_ms = row.integer(first + 7);
  job.next_attempt_ms = row.integer(first + 8);
  job.cancel_requested = row.integer(first + 9) != 0;
  job.cancel_requested_by = row.text(first + 10);
  job.version = row.integer(first + 11);
  job.change_seq = row.integer(first + 12);
  job.run_as = row.text(first + 13);
  return job;
}

Result<AttemptRecord> readAttempt(const Query& row, int first) {
  AttemptRecord attempt;
  attempt.job_id = row.text(first + 0);
  attempt.number = static_cast<int>(row.integer(first + 1));
  auto owner = [&] { return "attempt " + attempt.job_id + "/" + std::to_string(attempt.number); };
  const std::string phase = row.text(first + 2);
  const auto parsed_phase = parseAttemptPhase(phase);
  if (!parsed_phase) return fail(unreadable("attempts.phase", phase, owner()));
  attempt.phase = *parsed_phase;
  attempt.reason = row.text(first + 3);
  const std::string cause = row.text(first + 4);
  const auto parsed_cause = parseEndCause(cause);
  if (!parsed_cause) return fail(unreadable("attempts.cause", cause, owner()));
  attempt.cause = *parsed_cause;
  attempt.submit_token = row.text(first + 5);
  attempt.staging_dir = row.text(first + 6);
  attempt.slurm_job_id = fromStored(row.integer(first + 7));
  attempt.created_ms = row.integer(first + 8);
  attempt.submitted_ms = row.integer(first + 9);
  attempt.ended_ms = row.integer(first + 10);
  attempt.lookups = static_cast<int>(row.integer(first + 11));
  attempt.next_lookup_ms = row.integer(first + 12);
  attempt.missing_polls = static_cast<int>(row.integer(first + 13));
  attempt.abandon_requested = row.integer(first + 14) != 0;
  attempt.abandoned_by = row.text(first + 15);
  attempt.abandon_reason = row.text(first + 16);
  return attempt;
}

Result<ComponentRecord> readComponent(const Query& row, int first) {
  ComponentRecord component;
  component.index = static_cast<int>(row.integer(first + 0));
  component.pool = row.text(first + 1);
  component.slurm_job_id = fromStored(row.integer(first + 2));
  component.sluid = row.text(first + 3);
  auto state = decodeState(row.text(first + 4));
  if (!state) return fail(state.error());
  component.state = std::move(*state);
  component.reason = row.text(first + 5);
  component.exit_code = row.optionalInt(first + 6);
  component.signal = row.optionalInt(first + 7);
  component.nodes = row.text(first + 8);
  component.start_time = row.integer(first + 9);
  component.end_time = row.integer(first + 10);
  component.preempt_time = row.integer(first + 11);
  return component;
}

EventRecord readEvent(const Query& row) {
  EventRecord event;
  event.seq = row.integer(0);
  event.job_id = row.text(1);
  event.attempt = static_cast<int>(row.integer(2));
  event.time_ms = row.integer(3);
  event.from = row.text(4);
  event.to = row.text(5);
  event.reason = row.text(6);
  event.actor = row.text(7);
  return event;
}

std::string encodeState(const std::vector<std::string>& state) {
  // Slurm's strings are ASCII; anything else is escaped rather than refused, so an odd
  // value is still kept and shown (and reported as an unknown state by the mapper).
  return nlohmann::json(state).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::vector<std::string>> decodeState(const std::string& text) {
  const auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return fail(unreadable("components.state", text, "a component"));
  std::vector<std::string> state;
  for (const auto& item : parsed) {
    if (!item.is_string()) return fail(unreadable("components.state", text, "a component"));
    state.push_back(item.get<std::string>());
  }
  return state;
}

}  // namespace tuneplane::store
