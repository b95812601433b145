// See job_waiting.h.
#include "api/job_waiting.h"

#include "api/json_views.h"
#include "slurm/pending_reasons.h"

namespace tuneplane::api {
namespace {

using nlohmann::json;

bool isPending(const store::ComponentRecord& c) {
  return !c.state.empty() && c.state.front() == "PENDING";
}

ComponentWaiting fromStore(const std::string& pool, const std::string& reason, int64_t start_time) {
  return {pool,         reason,      std::nullopt, start_time > 0 ? start_time * 1000 : 0,
          std::nullopt, std::nullopt};
}

ComponentWaiting fromQueue(const std::string& pool, const QueuePlace& place) {
  return {pool,
          place.reason,
          place.partition,
          place.estimated_start > 0 ? place.estimated_start * 1000 : 0,
          place.position,
          place.pending_in_partition};
}

std::optional<std::string> reasonText(const std::string& reason) {
  const auto words = slurm::pendingReasonWords(reason);
  return words ? std::optional<std::string>(std::string(*words)) : std::nullopt;
}

}  // namespace

bool waitsInQueue(const store::AttemptRecord& attempt) {
  return attempt.phase == phase::AttemptPhase::kQueued;
}

std::optional<JobWaiting> jobWaiting(const store::JobView& view, const QueueSnapshot* snapshot) {
  if (view.attempts.empty() || !waitsInQueue(view.attempts.back())) return std::nullopt;
  const store::AttemptRecord& attempt = view.attempts.back();
  JobWaiting out;
  out.attempt = attempt.number;
  bool all_from_queue = !attempt.components.empty();
  for (const store::ComponentRecord& c : attempt.components) {
    if (!isPending(c)) continue;
    const QueuePlace* place = snapshot ? snapshot->find(c.sluid, c.slurm_job_id) : nullptr;
    if (place) {
      out.components.push_back(fromQueue(c.pool, *place));
    } else {
      all_from_queue = false;
      out.components.push_back(fromStore(c.pool, c.reason, c.start_time));
    }
  }
  if (out.components.empty()) return std::nullopt;
  out.as_of_ms = all_from_queue && snapshot ? snapshot->as_of_ms : 0;
  return out;
}

std::optional<JobWaiting> summaryWaiting(const store::AttemptRecord& last,
                                         const QueueSnapshot* snapshot) {
  if (!waitsInQueue(last)) return std::nullopt;
  JobWaiting out;
  out.attempt = last.number;
  const QueuePlace* place = snapshot ? snapshot->find("", last.slurm_job_id) : nullptr;
  if (place) {
    out.as_of_ms = snapshot->as_of_ms;
    out.components.push_back(fromQueue("", *place));
  } else {
    // What the list knows without the components: the attempt's reason, no estimate.
    out.components.push_back(fromStore("", "", 0));
  }
  return out;
}

json waitingJson(const std::optional<JobWaiting>& waiting) {
  if (!waiting) return nullptr;
  json components = json::array();
  const auto optionalInt = [](const std::optional<int>& v) { return v ? json(*v) : json(); };
  for (const ComponentWaiting& c : waiting->components) {
    const auto text = reasonText(c.reason);
    components.push_back({{"pool", c.pool.empty() ? json() : json(c.pool)},
                          {"reason", c.reason.empty() ? json() : json(c.reason)},
                          {"reason_text", text ? json(*text) : json()},
                          {"partition", c.partition ? json(*c.partition) : json()},
                          {"estimated_start", timeJson(c.estimated_start_ms)},
                          {"position", optionalInt(c.position)},
                          {"pending_in_partition", optionalInt(c.pending_in_partition)}});
  }
  return {{"attempt", waiting->attempt},
          {"as_of", timeJson(waiting->as_of_ms)},
          {"components", std::move(components)}};
}

void writeWaiting(JsonText& out, const std::optional<JobWaiting>& waiting) {
  if (!waiting) {
    out.null();
    return;
  }
  const auto text = [&out](const std::optional<std::string>& s) {
    if (s) {
      out.string(*s);
    } else {
      out.null();
    }
  };
  const auto number = [&out](const std::optional<int>& v) {
    if (v) {
      out.integer(*v);
    } else {
      out.null();
    }
  };
  const auto time = [&out](int64_t ms) {
    if (ms > 0) {
      out.string(timeText(ms));
    } else {
      out.null();
    }
  };
  // Keys in nlohmann's sorted order (json_text.h).
  out.beginObject();
  out.key("as_of");
  time(waiting->as_of_ms);
  out.key("attempt").integer(waiting->attempt);
  out.key("components").beginArray();
  for (const ComponentWaiting& c : waiting->components) {
    out.beginObject();
    out.key("estimated_start");
    time(c.estimated_start_ms);
    out.key("partition");
    text(c.partition);
    out.key("pending_in_partition");
    number(c.pending_in_partition);
    out.key("pool");
    text(c.pool.empty() ? std::nullopt : std::optional<std::string>(c.pool));
    out.key("position");
    number(c.position);
    out.key("reason");
    text(c.reason.empty() ? std::nullopt : std::optional<std::string>(c.reason));
    out.key("reason_text");
    text(reasonText(c.reason));
    out.endObject();
  }
  out.endArray();
  out.endObject();
}

}  // namespace tuneplane::api
