// See json_views.h.
#include "api/json_views.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "api/json_text.h"
#include "common/workdir_tree.h"
#include "launch/launch_request.h"
#include "spec/spec_parser.h"

namespace tuneplane::api {

using nlohmann::json;

namespace {

// Writes the time into `buf` and returns it; "" for 0 (unset).
std::string_view formatTime(int64_t unix_ms, char (&buf)[48]) {
  if (unix_ms <= 0) return {};
  // The calendar from <chrono>, not gmtime_r: glibc's takes a process-wide lock per call,
  // and every answer of GET /v1/jobs/{id} formats several times.
  using namespace std::chrono;
  const sys_time<milliseconds> time{milliseconds(unix_ms)};
  const sys_days day = floor<days>(time);
  const year_month_day date(day);
  const hh_mm_ss clock(time - day);
  const auto end = fmt::format_to_n(
      buf, sizeof buf, "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(date.year()),
      static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), clock.hours().count(),
      clock.minutes().count(), clock.seconds().count(), clock.subseconds().count());
  return {buf, std::min(end.size, sizeof buf)};
}

}  // namespace

std::string timeText(int64_t unix_ms) {
  char buf[48];
  return std::string(formatTime(unix_ms, buf));
}

json timeJson(int64_t unix_ms) {
  if (unix_ms <= 0) return nullptr;
  return timeText(unix_ms);
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
          {"preempt_time", timeJson(c.preempt_time * 1000)},
          {"start_time", timeJson(c.start_time * 1000)},
          {"end_time", timeJson(c.end_time * 1000)}};
}

json attemptJson(const store::AttemptRecord& a, bool with_components,
                 std::optional<int64_t> resume_from_step) {
  json out = {{"number", a.number},
              {"phase", phase::toString(a.phase)},
              {"terminal", phase::isTerminal(a.phase)},
              {"reason", a.reason},
              {"cause", phase::toString(a.cause)},
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
    out["resume_from_step"] = resume_from_step ? json(*resume_from_step) : json(nullptr);
  }
  return out;
}

namespace {

std::optional<int64_t> stepOf(const ResumeSteps& steps, int attempt) {
  const auto it = steps.find(attempt);
  return it == steps.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

}  // namespace

json jobSummaryJson(const store::JobRecord& job) {
  return {{"id", job.id},
          {"name", job.name},
          {"owner", job.owner},
          {"labels", job.labels},
          {"phase", phase::toString(job.phase)},
          {"terminal", phase::isTerminal(job.phase)},
          {"reason", job.reason},
          {"created", timeJson(job.created_ms)},
          {"updated", timeJson(job.updated_ms)},
          {"cancel_requested", job.cancel_requested},
          {"cancel_requested_by", nonEmptyOrNull(job.cancel_requested_by)},
          {"next_attempt_at", timeJson(job.next_attempt_ms)},
          {"run_as", nonEmptyOrNull(job.run_as)}};
}

std::optional<std::string> specWorkdir(std::string_view spec_text) {
  if (spec_text.find("workdir") == std::string_view::npos &&
      spec_text.find('\\') == std::string_view::npos) {
    return std::nullopt;
  }
  return spec::parsePartialJobSpec(spec_text).spec.workdir;
}

namespace {

json workdirJson(const std::optional<std::string>& sha256) {
  if (!sha256) return nullptr;
  return {{"sha256", *sha256},
          {"reference", workdir::workdirReference(*sha256)},
          {"path", launch::kContainerWorkdir}};
}

}  // namespace

int64_t preemptionCount(const store::JobView& view) {
  return std::count_if(view.attempts.begin(), view.attempts.end(),
                       [](const auto& a) { return a.cause == phase::EndCause::kPreempted; });
}

json jobJson(const store::JobView& view, const JobCharge& charge, const ResumeSteps& steps,
             const std::optional<JobWaiting>& waiting) {
  json out = jobSummaryJson(view.job);
  out["waiting"] = waitingJson(waiting);
  out["spec"] = view.job.spec;
  out["scheduling"] = {{"account", charge.account ? json(*charge.account) : json(nullptr)},
                       {"qos", charge.qos ? json(*charge.qos) : json(nullptr)}};
  json attempts = json::array();
  for (const auto& a : view.attempts) {
    attempts.push_back(attemptJson(a, true, stepOf(steps, a.number)));
  }
  out["attempt_count"] = view.attempts.size();
  out["preemptions"] = preemptionCount(view);
  out["attempts"] = std::move(attempts);
  out["workdir"] = workdirJson(specWorkdir(view.job.spec));
  return out;
}

namespace {

// The fields and key order of jobJson, attemptJson and componentJson (nlohmann sorts an
// object's keys; json_views_test compares the two writers on the same views).
void writeTime(JsonText& out, int64_t unix_ms) {
  char buf[48];
  if (unix_ms <= 0) {
    out.null();
  } else {
    out.string(formatTime(unix_ms, buf));
  }
}
void writeNonEmptyOrNull(JsonText& out, const std::string& s) {
  if (s.empty()) {
    out.null();
  } else {
    out.string(s);
  }
}
void writeSlurmId(JsonText& out, uint64_t id) {
  if (id == 0) {
    out.null();
  } else {
    out.unsignedInteger(id);
  }
}
void writeOptionalInt(JsonText& out, const std::optional<int>& v) {
  if (v) {
    out.integer(*v);
  } else {
    out.null();
  }
}

void writeComponent(JsonText& out, const store::ComponentRecord& c) {
  out.beginObject();
  writeTime(out.key("end_time"), c.end_time * 1000);
  writeOptionalInt(out.key("exit_code"), c.exit_code);
  out.key("index").integer(c.index);
  writeSlurmId(out.key("job_id"), c.slurm_job_id);
  out.key("nodes").string(c.nodes);
  out.key("pool").string(c.pool);
  writeTime(out.key("preempt_time"), c.preempt_time * 1000);
  out.key("reason").string(c.reason);
  writeOptionalInt(out.key("signal"), c.signal);
  writeNonEmptyOrNull(out.key("sluid"), c.sluid);
  writeTime(out.key("start_time"), c.start_time * 1000);
  out.key("state").beginArray();
  for (const auto& s : c.state) out.string(s);
  out.endArray();
  out.endObject();
}

void writeAttempt(JsonText& out, const store::AttemptRecord& a,
                  std::optional<int64_t> resume_from_step) {
  out.beginObject();
  writeNonEmptyOrNull(out.key("abandon_reason"), a.abandon_reason);
  writeNonEmptyOrNull(out.key("abandoned_by"), a.abandoned_by);
  out.key("cause").string(phase::toString(a.cause));
  out.key("components").beginArray();
  for (const auto& c : a.components) writeComponent(out, c);
  out.endArray();
  writeTime(out.key("created"), a.created_ms);
  writeTime(out.key("ended"), a.ended_ms);
  writeSlurmId(out.key("job_id"), a.slurm_job_id);
  out.key("lookups").integer(a.lookups);
  out.key("number").integer(a.number);
  out.key("phase").string(phase::toString(a.phase));
  out.key("reason").string(a.reason);
  if (resume_from_step) {
    out.key("resume_from_step").integer(*resume_from_step);
  } else {
    out.key("resume_from_step").null();
  }
  out.key("staging_dir").string(a.staging_dir);
  out.key("submit_token").string(a.submit_token);
  writeTime(out.key("submitted"), a.submitted_ms);
  out.key("terminal").boolean(phase::isTerminal(a.phase));
  out.endObject();
}

}  // namespace

std::string jobJsonText(const store::JobView& view, const JobCharge& charge,
                        const ResumeSteps& steps, const std::optional<JobWaiting>& waiting) {
  const store::JobRecord& job = view.job;
  std::string text;
  text.reserve(1024 + job.spec.size());
  JsonText out(text);
  out.beginObject();
  out.key("attempt_count").unsignedInteger(view.attempts.size());
  out.key("attempts").beginArray();
  for (const auto& a : view.attempts) writeAttempt(out, a, stepOf(steps, a.number));
  out.endArray();
  out.key("cancel_requested").boolean(job.cancel_requested);
  writeNonEmptyOrNull(out.key("cancel_requested_by"), job.cancel_requested_by);
  writeTime(out.key("created"), job.created_ms);
  out.key("id").string(job.id);
  out.key("labels").beginObject();
  for (const auto& [k, v] : job.labels) out.key(k).string(v);  // std::map: sorted
  out.endObject();
  out.key("name").string(job.name);
  writeTime(out.key("next_attempt_at"), job.next_attempt_ms);
  out.key("owner").string(job.owner);
  out.key("phase").string(phase::toString(job.phase));
  out.key("preemptions").integer(preemptionCount(view));
  out.key("reason").string(job.reason);
  writeNonEmptyOrNull(out.key("run_as"), job.run_as);
  out.key("scheduling").beginObject();
  for (auto [key, value] : {std::pair{"account", &charge.account}, std::pair{"qos", &charge.qos}}) {
    if (*value) {
      out.key(key).string(**value);
    } else {
      out.key(key).null();
    }
  }
  out.endObject();
  out.key("spec").string(job.spec);
  out.key("terminal").boolean(phase::isTerminal(job.phase));
  writeTime(out.key("updated"), job.updated_ms);
  writeWaiting(out.key("waiting"), waiting);
  if (auto sha256 = specWorkdir(job.spec)) {
    out.key("workdir").beginObject();
    out.key("path").string(launch::kContainerWorkdir);
    out.key("reference").string(workdir::workdirReference(*sha256));
    out.key("sha256").string(*sha256);
    out.endObject();
  } else {
    out.key("workdir").null();
  }
  out.endObject();
  return text;
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
