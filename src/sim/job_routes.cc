// slurmrestd's job routes, simulated: POST job/submit, GET, DELETE and POST job/{id}, GET and
// DELETE jobs, GET jobs/state — each in the shapes of the request's version (sim_api.h), its
// errors as the real server's (tests/data/slurm/'s transcripts). Dispatched by http_routes.cc.
#include <signal.h>

#include <ctime>

#include "sim/job_record.h"
#include "sim/process.h"
#include "sim/simulator_impl.h"

namespace tuneplane::sim {
namespace {

using nlohmann::json;

json jobsBody(json jobs, int64_t last_update) {
  return {{"jobs", std::move(jobs)},
          {"last_backfill", noVal(last_update)},
          {"last_update", noVal(last_update)}};
}

json emptyJobsBody() {
  return {{"jobs", json::array()}, {"last_backfill", noVal(0)}, {"last_update", noVal(0)}};
}

ApiError parseParamsError() {
  return {422, kErrRestInvalidQuery, "Rejecting request. Failure parsing parameters",
          "op_handler_job", ""};
}

// "s…" must be a valid SLUID (where the release takes them); anything else a positive
// decimal id. A ".step" suffix is allowed and ignored.
bool validJobIdOf(const std::string& raw, bool sluid_paths) {
  const std::string id = raw.substr(0, raw.find('.'));
  if (id.empty()) return false;
  if (looksLikeSluid(id)) return sluid_paths && parseSluid(id).has_value();
  if (id.size() > 10 || id.find_first_not_of("0123456789") != std::string::npos) return false;
  return std::stoull(id) > 0 && std::stoull(id) < 0xFFFFFFF0ull;
}

int signalNumber(const std::string& s) {
  if (s.empty()) return 0;
  if (s.find_first_not_of("0123456789") == std::string::npos) return std::stoi(s);
  std::string name = s.rfind("SIG", 0) == 0 ? s.substr(3) : s;
  for (int sig = 1; sig < 32; ++sig) {
    const char* abbrev = sigabbrev_np(sig);
    if (abbrev && name == abbrev) return sig;
  }
  return -1;
}

json statusEntry(int code, const std::string& step_id, uint32_t job_id) {
  return {{"error",
           {{"string", slurmStrerror(code)}, {"code", code}, {"message", slurmStrerror(code)}}},
          {"step_id", step_id},
          {"job_id", noVal(job_id, job_id != 0)},
          {"federation", {{"sibling", ""}}}};
}

// What both kill routes (DELETE job/{id} and jobs) answer a request whose token is refused.
json killAuthRefusal() {
  return {
      {"status", json::array()},
      {"errors",
       json::array(
           {ApiError{511, kErrAuth, "Signal request failed", "slurm_kill_jobs()", ""}.toJson()})}};
}

}  // namespace

bool SimulatorImpl::validJobId(const std::string& id) const {
  return validJobIdOf(id, release().sluid_paths);
}

void SimulatorImpl::routeSubmit(const SimApi& api, const httplib::Request& req,
                                httplib::Response& res, const std::string& user, bool auth_ok) {
  if (!auth_ok) {
    ApiError e{511, kErrAuth, "Batch job submission failed", "slurm_submit_batch_job()", ""};
    return sendJson(api, res, 511, {{"errors", json::array({e.toJson()})}});
  }
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return sendText(res, 400, "Failure during parsing");
  // The job is the acting user's: its uid and group from the cluster's users, else the host's.
  const std::optional<UnixUser> owner = lookupUnixUser(cluster_.users, user);
  SubmitOutcome outcome =
      planSubmit(body, cluster_, api, release(), Submitter{user, owner.has_value()});
  std::unique_lock<std::mutex> lock(mu_);
  if (!outcome.accepted) {  // a user no host knows is always refused, and leaves nothing
    if (owner) leaveRejectedLocked(outcome.rejection, *owner);
    lock.unlock();
    const ApiError& e = outcome.rejection.error;
    return sendJson(api, res, e.http_status,
                    {{"errors", json::array({e.toJson()})}, {"warnings", outcome.plan.warnings}});
  }
  uint32_t leader = 0;
  submitLocked(outcome.plan, *owner, &leader);
  if (duplicate_submits_ > 0) {  // the proxy's second copy of the same POST
    --duplicate_submits_;
    uint32_t copy = 0;
    submitLocked(outcome.plan, *owner, &copy);
  }
  if (stuck_submits_ > 0) --stuck_submits_;  // both copies of one POST never start
  const bool drop = drop_submits_ > 0;
  if (drop) --drop_submits_;
  const bool reset = !drop && reset_submits_ > 0;
  if (reset) --reset_submits_;
  lock.unlock();
  if (drop || reset) {
    dropConnection(req, reset);
    res.status = 500;
    return;
  }
  sendJson(api, res, 200,
           {{"job_id", leader},
            {"step_id", "batch"},
            {"job_submit_user_msg", ""},
            {"warnings", outcome.plan.warnings}});
}

void SimulatorImpl::routeJobGet(const SimApi& api, const std::string& id, httplib::Response& res,
                                bool auth_ok) {
  if (!auth_ok) {
    json body = emptyJobsBody();
    body["errors"] = json::array(
        {ApiError{511, kErrAuth, "Unable to query JobId=" + id, "_handle_job_get", ""}.toJson()});
    return sendJson(api, res, 511, body);
  }
  if (!validJobId(id))
    return sendJson(api, res, 422, {{"errors", json::array({parseParamsError().toJson()})}});
  std::lock_guard<std::mutex> lock(mu_);
  Job* job = findLocked(id.substr(0, id.find('.')));
  if (!job) {
    json body = emptyJobsBody();
    body["errors"] = json::array(
        {ApiError{404, kErrInvalidJobId, "Unable to query JobId=" + id, "_handle_job_get", ""}
             .toJson()});
    return sendJson(api, res, 404, body);
  }
  json jobs = json::array();
  // The leader of a het job answers for every component; a component for itself.
  if (job->isHet() && job->het_offset == 0) {
    for (Job* c : componentsLocked(*job)) jobs.push_back(jobRecord(*c, cluster_, api));
  } else {
    jobs.push_back(jobRecord(*job, cluster_, api));
  }
  sendJson(api, res, 200, jobsBody(std::move(jobs), last_update_));
}

void SimulatorImpl::routeJobDelete(const SimApi& api, const std::string& id,
                                   const httplib::Request& req, httplib::Response& res,
                                   const std::string& user, bool auth_ok) {
  if (!auth_ok) {
    return sendJson(api, res, 511, killAuthRefusal());
  }
  if (!validJobId(id))
    return sendJson(api, res, 422, {{"errors", json::array({parseParamsError().toJson()})}});
  const int sig = signalNumber(req.get_param_value("signal"));
  std::unique_lock<std::mutex> lock(mu_);
  Job* job = findLocked(id.substr(0, id.find('.')));
  if (!job) {
    return sendJson(api, res, 200,
                    {{"status", json::array({statusEntry(kErrInvalidJobId, id, 0)})}});
  }
  if (stallDeleteLocked(lock, *job)) {  // a cancel that times out: no answer, nothing done
    lock.unlock();
    dropConnection(req);
    res.status = 500;
    return;
  }
  job = findLocked(id.substr(0, id.find('.')));  // the table may have changed while stalled
  if (!job) {
    return sendJson(api, res, 200,
                    {{"status", json::array({statusEntry(kErrInvalidJobId, id, 0)})}});
  }
  Job& lead = leaderLocked(*job);
  // Another user's job: 200 with the refusal in status[] (19), whatever its state.
  if (lead.user != user && !isOperatorUser(user)) {
    return sendJson(
        api, res, 200,
        {{"status",
          json::array({statusEntry(kErrAccessDenied, std::to_string(job->id), job->id)})}});
  }
  // A requeue still completing is PENDING, not finished: a kill stops the requeue.
  if (lead.finished() || (lead.completing && !lead.requeuing)) {
    return sendJson(
        api, res, 200,
        {{"status",
          json::array({statusEntry(kErrAlreadyDone, std::to_string(job->id), job->id)})}});
  }
  if (sig > 0 && sig != SIGKILL && sig != SIGTERM) {
    // A plain signal (scancel --signal) reaches the step; the job goes on.
    if (lead.pid > 0) signalProcessGroup(lead.pid, sig);
    return sendJson(api, res, 200, {{"status", json::array()}});
  }
  cancelLocked(lead);
  wake_.notify_all();
  sendJson(api, res, 200, {{"status", json::array()}});
}

void SimulatorImpl::routeJobUpdate(const SimApi& api, const std::string& id,
                                   const httplib::Request& req, httplib::Response& res,
                                   bool auth_ok) {
  auto failed = [&](int status, int number) {
    ApiError e{status, number, "Job update requested failed", "slurm_update_job2()", ""};
    sendJson(api, res, status, {{"results", nullptr}, {"errors", json::array({e.toJson()})}});
  };
  if (!auth_ok) return failed(511, kErrAuth);
  if (!validJobId(id))
    return sendJson(api, res, 422, {{"errors", json::array({parseParamsError().toJson()})}});
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return sendText(res, 400, "Failure during parsing");
  std::lock_guard<std::mutex> lock(mu_);
  // Updates are keyed by the numeric id only: slurm_update_job2() finds no job by SLUID.
  Job* job = looksLikeSluid(id) ? nullptr : findLocked(id.substr(0, id.find('.')));
  if (!job) return failed(404, kErrInvalidJobId);
  if (const auto h = body.find("hold"); h != body.end() && h->is_boolean()) {
    if (job->base_state == "PENDING") {
      job->request.hold = *h;
      job->reason = *h ? "JobHeldUser" : "None";
      job->state_description.clear();
    }
  }
  if (body.contains("comment") && body["comment"].is_string())
    job->request.comment = body["comment"];
  if (body.contains("name") && body["name"].is_string()) job->request.name = body["name"];
  if (const auto r = body.find("requeue"); r != body.end() && r->is_boolean())
    job->request.requeue = *r;  // scontrol update Requeue=1 (requeueJob does not need it)
  if (body.contains("time_limit")) {
    const json& t = body["time_limit"];
    if (t.is_number()) job->request.time_limit_min = t.get<int64_t>();
    if (t.is_object() && t.value("set", false)) job->request.time_limit_min = t.value("number", 0);
  }
  touchLocked(*job);
  scheduleLocked();
  wake_.notify_all();
  sendJson(api, res, 200, {{"results", nullptr}});
}

void SimulatorImpl::routeJobs(const SimApi& api, const httplib::Request& req,
                              httplib::Response& res, bool auth_ok) {
  if (!auth_ok) {
    json body = emptyJobsBody();
    body["errors"] = json::array(
        {ApiError{511, kErrAuth, "Unable to query jobs", "slurm_load_jobs()", ""}.toJson()});
    return sendJson(api, res, 511, body);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (req.has_param("update_time")) {
    int64_t since = 0;
    try {
      since = std::stoll(req.get_param_value("update_time"));
    } catch (...) {
      return sendJson(api, res, 422, {{"errors", json::array({parseParamsError().toJson()})}});
    }
    // All or nothing, as the real server: no change since → an empty list and a warning.
    if (since >= last_update_) {
      const time_t t = static_cast<time_t>(since);
      tm local{};
      localtime_r(&t, &local);
      char when[32];
      strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &local);
      json body = emptyJobsBody();
      body["warnings"] = json::array({{{"description", "No job changes since update_time[" +
                                                           std::to_string(since) + "]=" + when},
                                       {"source", "op_handler_jobs"}}});
      return sendJson(api, res, 200, body);
    }
  }
  // Without the DETAIL flag (slurmrestd's default has it) job_resources is not filled in.
  const bool detail =
      !req.has_param("flags") || req.get_param_value("flags").find("DETAIL") != std::string::npos;
  json jobs = json::array();
  for (const auto& [id, job] : jobs_) {
    jobs.push_back(jobRecord(job, cluster_, api));
    if (!detail) jobs.back()["job_resources"] = nullptr;
  }
  sendJson(api, res, 200, jobsBody(std::move(jobs), last_update_));
}

void SimulatorImpl::routeJobsDelete(const SimApi& api, const httplib::Request& req,
                                    httplib::Response& res, const std::string& user, bool auth_ok) {
  if (!auth_ok) {
    return sendJson(api, res, 511, killAuthRefusal());
  }
  json body = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return sendText(res, 400, "Failure during parsing");
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint32_t> targets;
  for (auto& [id, job] : jobs_) {
    if (job.finished() || (job.completing && !job.requeuing) ||
        (job.isHet() && job.het_offset != 0))
      continue;
    bool match = true;
    if (body.contains("jobs") && body["jobs"].is_array()) {
      match = false;
      for (const auto& j : body["jobs"]) {
        const std::string s = j.is_string() ? j.get<std::string>() : j.dump();
        if (s == std::to_string(id) || (looksLikeSluid(s) && parseSluid(s) == job.sluid))
          match = true;
      }
    }
    if (body.contains("job_name") && body["job_name"] != job.request.name) match = false;
    if (body.contains("user_name") && body["user_name"] != job.user) match = false;
    if (match) targets.push_back(id);
  }
  // Another user's job is left alone, with the refusal in status[] (as a DELETE of it alone).
  json status = json::array();
  for (uint32_t id : targets) {
    if (jobs_[id].user != user && !isOperatorUser(user)) {
      status.push_back(statusEntry(kErrAccessDenied, std::to_string(id), id));
      continue;
    }
    cancelLocked(jobs_[id]);
  }
  wake_.notify_all();
  sendJson(api, res, 200, {{"status", status}});
}

void SimulatorImpl::routeJobsState(const SimApi& api, const httplib::Request& req,
                                   httplib::Response& res, bool auth_ok) {
  if (!auth_ok) {
    return sendJson(
        api, res, 511,
        {{"jobs", json::array()},
         {"errors",
          json::array({ApiError{511, kErrAuth, "Unable to query jobs", "slurm_load_jobs()", ""}
                           .toJson()})}});
  }
  // The documented CSV form is broken on the real server: a literal comma → 500, an
  // encoded one → 422. Only repeated job_id= works.
  const std::string& target = req.target;
  const auto q = target.find('?');
  const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
  if (query.find(',') != std::string::npos) return sendText(res, 500, "Unspecified error");
  if (query.find("%2C") != std::string::npos || query.find("%2c") != std::string::npos) {
    ApiError e{422, kErrRestInvalidQuery, "Rejecting request. Failure parsing query",
               "op_handler_job_states", ""};
    return sendJson(api, res, 422, {{"errors", json::array({e.toJson()})}});
  }
  std::set<uint32_t> wanted;
  bool filter = false;
  for (size_t i = 0; i < req.get_param_value_count("job_id"); ++i) {
    const std::string v = req.get_param_value("job_id", i);
    if (looksLikeSluid(v)) {
      if (release().sluid_state_filter_ignored) continue;  // 26.05 ignores a SLUID filter
      ApiError e{422, kErrRestInvalidQuery, "Rejecting request. Failure parsing query",
                 "op_handler_job_states", ""};
      return sendJson(api, res, 422, {{"errors", json::array({e.toJson()})}});
    }
    try {
      wanted.insert(static_cast<uint32_t>(std::stoul(v)));
      filter = true;
    } catch (...) {
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  json jobs = json::array();
  for (const auto& [id, job] : jobs_) {
    if (filter && !wanted.count(id) && !(job.isHet() && wanted.count(job.het_job_id))) continue;
    jobs.push_back(jobStateEntry(job));
  }
  sendJson(api, res, 200, {{"jobs", jobs}});
}

}  // namespace tuneplane::sim
