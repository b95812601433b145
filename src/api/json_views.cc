// See json_views.h.
#include "api/json_views.h"

#include <ctime>

#include <fmt/format.h>

namespace tuneplane::api {

using nlohmann::json;

json timeJson(int64_t unix_ms) {
  if (unix_ms <= 0) return nullptr;
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     unix_ms % 1000);
}

namespace {

json optionalInt(const std::optional<int>& v) {
  return v ? json(*v) : json(nullptr);
}
json nonEmptyOrNull(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}
json slurmId(uint64_t id) {
  return id == 0 ? json(nullptr) : json(id);
}

}  // namespace

json componentJson(const store::ComponentRecord& c) {
  return {{"index", c.index},
          {"pool", c.pool},
          {"job_id", slurmId(c.slurm_job_id)},
          {"sluid", nonEmptyOrNull(c.sluid)},
          {"state", c.state},
          {"reason", c.reason},
          {"exit_code", optionalInt(c.exit_code)},
          {"signal", optionalInt(c.signal)},
          {"nodes", c.nodes},
          {"start_time", timeJson(c.start_time * 1000)},
          {"end_time", timeJson(c.end_time * 1000)}};
}

json attemptJson(const store::AttemptRecord& a, bool with_components) {
  json out = {{"number", a.number},
              {"phase", store::toString(a.phase)},
              {"reason", a.reason},
              {"cause", store::toString(a.cause)},
              {"submit_token", a.submit_token},
              {"staging_dir", a.staging_dir},
              {"job_id", slurmId(a.slurm_job_id)},
              {"created", timeJson(a.created_ms)},
              {"submitted", timeJson(a.submitted_ms)},
              {"ended", timeJson(a.ended_ms)},
              {"lookups", a.lookups},
              {"abandoned_by", nonEmptyOrNull(a.abandoned_by)},
              {"abandon_reason", nonEmptyOrNull(a.abandon_reason)}};
  if (with_components) {
    json components = json::array();
    for (const auto& c : a.components) components.push_back(componentJson(c));
    out["components"] = std::move(components);
  }
  return out;
}

json jobSummaryJson(const store::JobRecord& job) {
  return {{"id", job.id},
          {"name", job.name},
          {"owner", job.owner},
          {"labels", job.labels},
          {"phase", store::toString(job.phase)},
          {"reason", job.reason},
          {"created", timeJson(job.created_ms)},
          {"updated", timeJson(job.updated_ms)},
          {"cancel_requested", job.cancel_requested},
          {"cancel_requested_by", nonEmptyOrNull(job.cancel_requested_by)},
          {"next_attempt_at", timeJson(job.next_attempt_ms)}};
}

json jobJson(const store::JobView& view) {
  json out = jobSummaryJson(view.job);
  out["spec"] = view.job.spec;
  json attempts = json::array();
  for (const auto& a : view.attempts) attempts.push_back(attemptJson(a, true));
  out["attempt_count"] = view.attempts.size();
  out["attempts"] = std::move(attempts);
  return out;
}

json eventJson(const store::EventRecord& e) {
  return {{"seq", e.seq}, {"time", timeJson(e.time_ms)}, {"attempt", e.attempt}, {"from", e.from},
          {"to", e.to},   {"reason", e.reason},          {"actor", e.actor}};
}

json errorsJson(const Errors& errors) {
  json list = json::array();
  for (const auto& e : errors) {
    list.push_back({{"code", e.code}, {"field", e.field}, {"message", e.message}});
  }
  return {{"errors", std::move(list)}};
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace tuneplane::api
