#include "client/api_objects.h"

#include <fmt/format.h>

#include "phase/phases.h"

namespace tuneplane::client {
namespace {

// Tolerant member reads: absent, null or another type → the default / nullopt.
std::optional<std::string> optText(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}
std::string text(const Json& j, const char* key) {
  return optText(j, key).value_or("");
}
std::optional<int64_t> optInt(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}
std::optional<int> optInt32(const Json& j, const char* key) {
  const auto value = optInt(j, key);
  if (!value || *value < INT32_MIN || *value > INT32_MAX) return std::nullopt;
  return static_cast<int>(*value);
}
bool flag(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

Error badResponse(const std::string& field, const std::string& message) {
  return Error{kErrBadResponse, field, message};
}

ComponentView componentFromJson(const Json& j) {
  ComponentView c;
  if (!j.is_object()) return c;
  c.index = optInt32(j, "index").value_or(0);
  c.pool = text(j, "pool");
  c.job_id = optInt(j, "job_id");
  c.sluid = text(j, "sluid");
  if (auto it = j.find("state"); it != j.end() && it->is_array()) {
    for (const Json& s : *it) {
      if (s.is_string()) c.state.push_back(s.get<std::string>());
    }
  } else if (auto single = optText(j, "state")) {
    c.state.push_back(*single);
  }
  c.reason = text(j, "reason");
  c.exit_code = optInt32(j, "exit_code");
  c.signal = optInt32(j, "signal");
  c.nodes = text(j, "nodes");
  c.start_time = optText(j, "start_time");
  c.end_time = optText(j, "end_time");
  c.preempt_time = optText(j, "preempt_time");
  return c;
}

AttemptView attemptFromJson(const Json& j) {
  AttemptView a;
  if (!j.is_object()) return a;
  a.number = optInt32(j, "number").value_or(0);
  a.phase = text(j, "phase");
  a.reason = text(j, "reason");
  a.cause = text(j, "cause");
  a.submit_token = text(j, "submit_token");
  a.staging_dir = text(j, "staging_dir");
  a.job_id = optInt(j, "job_id");
  a.created = optText(j, "created");
  a.submitted = optText(j, "submitted");
  a.ended = optText(j, "ended");
  a.lookups = optInt(j, "lookups").value_or(0);
  a.abandoned_by = optText(j, "abandoned_by");
  a.abandon_reason = optText(j, "abandon_reason");
  a.resume_from_step = optInt(j, "resume_from_step");
  if (auto it = j.find("components"); it != j.end() && it->is_array()) {
    for (const Json& c : *it) a.components.push_back(componentFromJson(c));
  }
  return a;
}

std::optional<WaitingView> waitingFromJson(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  WaitingView w;
  w.attempt = optInt32(j, "attempt").value_or(0);
  w.as_of = optText(j, "as_of");
  if (auto it = j.find("components"); it != j.end() && it->is_array()) {
    for (const Json& c : *it) {
      if (!c.is_object()) continue;
      w.components.push_back({text(c, "pool"), text(c, "reason"), text(c, "reason_text"),
                              text(c, "partition"), optText(c, "estimated_start"),
                              optInt32(c, "position"), optInt32(c, "pending_in_partition")});
    }
  }
  return w;
}

template <typename T, typename F>
Result<std::vector<T>> itemsOf(const Json& list, F&& one) {
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    return fail(badResponse("items", "the answer has no items[] list"));
  }
  std::vector<T> out;
  size_t i = 0;
  for (const Json& item : list["items"]) {
    auto view = one(item);
    if (!view) {
      Error e = view.error();
      e.field = fmt::format("items[{}].{}", i, e.field);
      return fail(std::move(e));
    }
    out.push_back(std::move(*view));
    ++i;
  }
  return out;
}

}  // namespace

bool AttemptView::terminal() const {
  const auto parsed = phase::parseAttemptPhase(phase);
  return parsed && phase::isTerminal(*parsed);
}

bool JobView::terminal() const {
  const auto parsed = phase::parseJobPhase(phase);
  return parsed && phase::isTerminal(*parsed);
}

bool JobView::succeeded() const {
  return phase::parseJobPhase(phase) == phase::JobPhase::kSucceeded;
}

const AttemptView* JobView::attempt(int number) const {
  for (const AttemptView& a : attempts) {
    if (a.number == number) return &a;
  }
  if (current_attempt && current_attempt->number == number) return &*current_attempt;
  return nullptr;
}

Result<JobView> jobFromJson(const Json& j) {
  if (!j.is_object()) return fail(badResponse("", "a job must be a JSON object"));
  JobView job;
  job.id = text(j, "id");
  job.phase = text(j, "phase");
  if (job.id.empty()) return fail(badResponse("id", "the job has no id"));
  if (job.phase.empty()) return fail(badResponse("phase", "the job has no phase"));
  job.name = text(j, "name");
  job.owner = text(j, "owner");
  if (auto it = j.find("labels"); it != j.end() && it->is_object()) {
    for (const auto& [key, value] : it->items()) {
      job.labels.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  job.reason = text(j, "reason");
  job.created = optText(j, "created");
  job.updated = optText(j, "updated");
  job.cancel_requested = flag(j, "cancel_requested");
  job.cancel_requested_by = optText(j, "cancel_requested_by");
  job.next_attempt_at = optText(j, "next_attempt_at");
  if (auto it = j.find("workdir"); it != j.end() && it->is_object()) {
    job.workdir = optText(*it, "reference");
    job.workdir_path = optText(*it, "path");
  }
  if (auto it = j.find("scheduling"); it != j.end() && it->is_object()) {
    job.slurm_account = optText(*it, "account");
    job.qos = optText(*it, "qos");
  }
  if (auto it = j.find("attempts"); it != j.end() && it->is_array()) {
    for (const Json& a : *it) job.attempts.push_back(attemptFromJson(a));
  }
  job.attempt_count = optInt32(j, "attempt_count").value_or(static_cast<int>(job.attempts.size()));
  job.preemptions = optInt32(j, "preemptions").value_or(0);
  if (auto it = j.find("waiting"); it != j.end()) job.waiting = waitingFromJson(*it);
  if (auto it = j.find("current_attempt"); it != j.end() && it->is_object()) {
    job.current_attempt = attemptFromJson(*it);
  } else if (!job.attempts.empty()) {
    job.current_attempt = job.attempts.back();
  }
  return job;
}

Result<EventView> eventFromJson(const Json& j) {
  if (!j.is_object()) return fail(badResponse("", "an event must be a JSON object"));
  EventView e;
  e.seq = optInt(j, "seq").value_or(0);
  e.time = optText(j, "time");
  e.attempt = optInt32(j, "attempt").value_or(0);
  e.from = text(j, "from");
  e.to = text(j, "to");
  e.reason = text(j, "reason");
  e.actor = text(j, "actor");
  return e;
}

Result<LogsView> logsFromJson(const Json& j) {
  if (!j.is_object()) return fail(badResponse("", "a log answer must be a JSON object"));
  LogsView logs;
  const auto content = optText(j, "content");
  logs.missing_reason = optText(j, "missing_reason");
  if (!content && !logs.missing_reason) {
    return fail(badResponse("content", "the log answer has no content"));
  }
  logs.content = content.value_or("");
  logs.attempt = optInt32(j, "attempt").value_or(0);
  logs.component = text(j, "component");
  logs.stream = text(j, "stream");
  logs.truncated = flag(j, "truncated");
  logs.bytes = static_cast<uint64_t>(std::max<int64_t>(0, optInt(j, "bytes").value_or(0)));
  logs.lines = static_cast<uint64_t>(std::max<int64_t>(0, optInt(j, "lines").value_or(0)));
  return logs;
}

Result<std::vector<JobView>> jobsFromList(const Json& list) {
  return itemsOf<JobView>(list, jobFromJson);
}

Result<std::vector<EventView>> eventsFromList(const Json& list) {
  return itemsOf<EventView>(list, eventFromJson);
}

}  // namespace tuneplane::client
