// The REST surface of the simulator: slurmrestd's routes under /slurm/<version>/ for every
// version it serves (sim_api.h), its auth and error shapes (as in tests/data/slurm/'s
// transcripts of each version), GET /openapi/v3, plus the loopback-only admin route for faults.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <ctime>
#include <thread>

#include "common/jwt.h"
#include "sim/job_record.h"
#include "sim/process.h"
#include "sim/scheduler.h"
#include "sim/simulator_impl.h"

namespace tuneplane::sim {
namespace {

using nlohmann::json;

constexpr const char* kPrefix = "/slurm/";

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

void sendText(httplib::Response& res, int status, const std::string& text) {
  res.status = status;
  res.set_content(text, "text/plain");
}

}  // namespace

json SimulatorImpl::meta(const SimApi& api) const {
  json m = api.meta(release(), "127.0.0.1:" + std::to_string(port_) + "(fd:9)", cluster_.name);
  // 19_identity: a slurmrestd whose slurmctld stores accounting in slurmdbd says so.
  if (storesAccounting()) m["plugin"]["accounting_storage"] = "accounting_storage/slurmdbd";
  return m;
}

bool SimulatorImpl::validJobId(const std::string& id) const {
  return validJobIdOf(id, release().sluid_paths);
}

void SimulatorImpl::sendJson(httplib::Response& res, int status, json body) const {
  sendJson(*served_.back(), res, status, std::move(body));
}

void SimulatorImpl::sendJson(const SimApi& api, httplib::Response& res, int status,
                             json body) const {
  if (!body.contains("meta")) body["meta"] = meta(api);
  if (!body.contains("errors")) body["errors"] = json::array();
  if (!body.contains("warnings")) body["warnings"] = json::array();
  res.status = status;
  res.set_content(body.dump(2), "application/json");
}

void SimulatorImpl::installRoutes() {
  auto h = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
  server_.Get(".*", h);
  server_.Post(".*", h);
  server_.Delete(".*", h);
  server_.Put(".*", h);
}

bool SimulatorImpl::authenticate(const httplib::Request& req, std::string* user, bool* has_token) {
  std::string token = req.get_header_value("X-SLURM-USER-TOKEN");
  if (token.empty()) {
    const std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) == 0) token = auth.substr(7);
  }
  *has_token = !token.empty();
  if (token.empty()) return false;
  auto claims = jwt::verifyHs256(token, key_, realNowUnix());
  if (!claims) return false;
  // Only SlurmUser/root may act for someone else (13a, 19: another token naming a user).
  const auto acting =
      actingUser(claims->user, req.get_header_value("X-SLURM-USER-NAME"), options_.slurm_user);
  if (!acting) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (claims->issued_at < token_cutoff_ || expired_tokens_.count(token)) return false;
  seen_tokens_.insert(token);
  *user = *acting;
  return true;
}

void SimulatorImpl::dropConnection(const httplib::Request& req, bool reset) const {
  // httplib 0.11 does not expose the socket: find it by its two ports and shut it down,
  // so the response written after the handler goes nowhere and the client sees the
  // connection close with no reply (a lost receipt).
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  while (const dirent* entry = readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    if (fd <= 2) continue;
    sockaddr_storage local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0) continue;
    auto port = [](const sockaddr_storage& a) -> int {
      if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
      if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
      return -1;
    };
    if (port(local) == port_ && port(peer) == req.remote_port) {
      if (reset) {
        // connect() to AF_UNSPEC disconnects a TCP socket: Linux answers the peer with a RST.
        sockaddr unspecified{};
        unspecified.sa_family = AF_UNSPEC;
        connect(fd, &unspecified, sizeof unspecified);
      }
      shutdown(fd, SHUT_RDWR);
      break;
    }
  }
  closedir(dir);
}

void SimulatorImpl::handle(const httplib::Request& req, httplib::Response& res) {
  const std::string& path = req.path;
  if (path.rfind("/sim/admin/", 0) == 0) return handleAdmin(req, res);
  std::chrono::milliseconds latency{0};
  {
    std::lock_guard<std::mutex> lock(mu_);
    latency = latency_;
    if (fail_requests_ > 0) {
      --fail_requests_;
      sendText(res, fail_status_,
               fail_status_ == 503 ? "Service Unavailable" : "Unspecified error");
      return;
    }
  }
  if (latency.count() > 0) {
    std::unique_lock<std::mutex> lock(mu_);
    waitForClockLocked(lock, steadyNow() + latency);
  }

  std::string user;
  bool has_token = false;
  const bool auth_ok = authenticate(req, &user, &has_token);
  if (path == "/openapi/v3" || path == "/openapi/v3/") {
    if (!has_token) return sendText(res, 401, "Authentication failure");
    return routeOpenApi(res);
  }
  if (path.rfind("/slurmdb/", 0) == 0) return routeSlurmdb(req, res);
  if (path.rfind(kPrefix, 0) != 0) return sendText(res, 404, "Invalid or unknown URL path");
  const std::string versioned = path.substr(std::string(kPrefix).size());
  const std::string version = versioned.substr(0, versioned.find('/'));
  const SimApi* served = nullptr;
  for (const SimApi* api : served_) {
    if (api->name == version) served = api;
  }
  if (served == nullptr || versioned.size() == version.size()) {
    return sendText(res, 404, kUnknownEndpointText);
  }
  const SimApi& api = *served;
  const std::string route = versioned.substr(version.size() + 1);
  if (lieAboutRead(api, req.method, route, res)) return;
  if (!has_token) return sendText(res, 401, "Authentication failure");

  // Plain string matching (GCC 12's <regex> trips -Wmaybe-uninitialized under ASan).
  const std::string& method = req.method;
  auto is = [&](const std::string& base) { return route == base || route == base + "/"; };
  if (method == "GET" && is("ping")) return routePing(api, auth_ok, res);
  if (method == "POST" && is("job/submit")) return routeSubmit(api, req, res, user, auth_ok);
  if (method == "GET" && is("jobs")) return routeJobs(api, req, res, auth_ok);
  if (method == "DELETE" && is("jobs")) return routeJobsDelete(api, req, res, user, auth_ok);
  if (method == "GET" && is("jobs/state")) return routeJobsState(api, req, res, auth_ok);
  if (method == "GET" && is("partitions")) return routePartitions(api, res, auth_ok);
  if (method == "GET" && is("nodes")) return routeNodes(api, res, auth_ok);
  if (method == "GET" && is("licenses")) return routeLicenses(api, res, auth_ok);
  if (route.rfind("job/", 0) == 0) {
    std::string id = route.substr(4);
    if (!id.empty() && id.back() == '/') id.pop_back();
    const bool plain = !id.empty() && id != "submit" &&
                       id.find_first_not_of(
                           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                           "0123456789_.") == std::string::npos;
    if (plain && method == "GET") return routeJobGet(api, id, res, auth_ok);
    if (plain && method == "DELETE") return routeJobDelete(api, id, req, res, user, auth_ok);
    if (plain && method == "POST") return routeJobUpdate(api, id, req, res, auth_ok);
  }
  sendText(res, 404, "Invalid or unknown URL path");
}

bool SimulatorImpl::lieAboutRead(const SimApi& api, const std::string& method,
                                 const std::string& route, httplib::Response& res) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (steadyNow() >= lie_until_) return false;
  }
  if (method != "GET") return false;
  auto is = [&](const std::string& base) { return route == base || route == base + "/"; };
  if (is("jobs/state")) {
    sendJson(api, res, 200, {{"jobs", json::array()}});  // "no job of those ids"
    return true;
  }
  if (is("jobs")) {
    sendText(res, 502, "Bad Gateway");
    return true;
  }
  if (route.rfind("job/", 0) == 0 && route != "job/submit" && route != "job/submit/") {
    sendText(res, 404, "Not Found");  // no Slurm error in it: proves nothing
    return true;
  }
  return false;
}

void SimulatorImpl::routeOpenApi(httplib::Response& res) {
  res.status = 200;
  res.set_content(openApiDocument(served_, release()).dump(2), "application/json");
}

void SimulatorImpl::routePing(const SimApi& api, bool auth_ok, httplib::Response& res) {
  sendJson(api, res, 200, {{"pings", json::array({api.pingEntry(auth_ok)})}});
}

void SimulatorImpl::routeLicenses(const SimApi& api, httplib::Response& res, bool auth_ok) {
  if (!auth_ok) {
    ApiError e{511, kErrAuth, "slurm_load_licenses() was unable to load licenses",
               "op_handler_licenses", ""};
    return sendJson(api, res, 511,
                    {{"licenses", json::array()},
                     {"last_update", noVal(0)},
                     {"errors", json::array({e.toJson()})}});
  }
  sendJson(
      api, res, 200,
      {{"licenses", json::array()},
       {"last_update", noVal(nowUnix())},
       {"warnings", json::array({{{"description", "Zero licenses to dump"}, {"source", ""}}})}});
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
    return sendJson(
        api, res, 511,
        {{"status", json::array()},
         {"errors",
          json::array({ApiError{511, kErrAuth, "Signal request failed", "slurm_kill_jobs()", ""}
                           .toJson()})}});
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
    return sendJson(
        api, res, 511,
        {{"status", json::array()},
         {"errors",
          json::array({ApiError{511, kErrAuth, "Signal request failed", "slurm_kill_jobs()", ""}
                           .toJson()})}});
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

void SimulatorImpl::routePartitions(const SimApi& api, httplib::Response& res, bool auth_ok) {
  // A refused token: 511 and nothing else, not even the error (13f_auth_probe).
  if (!auth_ok) return sendJson(api, res, 511, json::object());
  json parts = json::array();
  for (const auto& p : cluster_.partitions) {
    json r = api.partition_template;
    int cpus = 0;
    for (const auto& n : p.nodes)
      if (const NodeConfig* node = cluster_.node(n)) cpus += node->cpus;
    r["name"] = p.name;
    r["cluster"] = cluster_.name;
    r["nodes"]["configured"] = compressHostlist(p.nodes);
    r["nodes"]["total"] = p.nodes.size();
    r["nodes"]["allowed_allocation"] = "";
    r["cpus"]["total"] = cpus;
    r["partition"]["state"] = json::array({"UP"});
    // Only where the version has it (v0.0.44's partition_info has no `flags`).
    if (r.contains("flags")) r["flags"] = p.is_default ? json::array({"DEFAULT"}) : json::array();
    r["maximums"]["time"] = json{{"set", true}, {"infinite", true}, {"number", 0}};
    r["defaults"]["time"] = json{{"set", true}, {"infinite", true}, {"number", 0}};
    parts.push_back(r);
  }
  // The test cluster runs no slurmdbd, and slurmrestd says what it could not ask (13f).
  json warnings = json::array();
  if (!storesAccounting()) {
    warnings.push_back({{"description",
                         "Slurm accounting storage is disabled. Could not query the following: "
                         "[TRES]."},
                        {"source", ""}});
  }
  sendJson(api, res, 200,
           {{"partitions", parts}, {"last_update", noVal(nowUnix())}, {"warnings", warnings}});
}

void SimulatorImpl::routeNodes(const SimApi& api, httplib::Response& res, bool auth_ok) {
  if (!auth_ok) {
    ApiError e{511, kErrAuth, "Unable to query nodes", "slurm_load_node()", ""};
    return sendJson(api, res, 511,
                    {{"nodes", json::array()},
                     {"last_update", noVal(0)},
                     {"errors", json::array({e.toJson()})}});
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, NodeUsage> used;
  for (const auto& [id, job] : jobs_) {
    if (!job.resources_held) continue;
    for (const auto& n : job.alloc_nodes) {
      used[n].cpus += job.alloc_cpus_per_node;
      used[n].memory_mb += job.alloc_mem_per_node;
      used[n].gpus += job.alloc_gpus_per_node;
    }
  }
  json nodes = json::array();
  for (const auto& n : cluster_.nodes) {
    json r = api.node_template;
    const NodeUsage u = used[n.name];
    r["name"] = r["hostname"] = r["address"] = n.name;
    r["cluster_name"] = cluster_.name;
    r["cpus"] = r["effective_cpus"] = n.cpus;
    r["sockets"] = n.cpus;
    r["cores"] = 1;
    r["threads"] = 1;
    r["boards"] = 1;
    r["real_memory"] = n.memory_mb;
    r["alloc_cpus"] = u.cpus;
    r["alloc_idle_cpus"] = n.cpus - u.cpus;
    r["alloc_memory"] = u.memory_mb;
    r["features"] = n.features;
    r["active_features"] = n.features;
    r["gres"] = n.gpus > 0
                    ? "gpu:" + (n.gpu_type.empty() ? "" : n.gpu_type + ":") + std::to_string(n.gpus)
                    : "";
    r["gres_used"] =
        n.gpus > 0 ? "gpu:" + (n.gpu_type.empty() ? "" : n.gpu_type + ":") + std::to_string(u.gpus)
                   : "";
    const char* state = u.cpus == 0 ? "IDLE" : (u.cpus < n.cpus ? "MIXED" : "ALLOCATED");
    r["state"] = json::array({state});
    json partitions = json::array();
    for (const auto& p : cluster_.partitions)
      for (const auto& pn : p.nodes)
        if (pn == n.name) partitions.push_back(p.name);
    r["partitions"] = partitions;
    r["tres"] = "cpu=" + std::to_string(n.cpus) + ",mem=" + std::to_string(n.memory_mb) + "M" +
                (n.gpus > 0 ? ",gres/gpu=" + std::to_string(n.gpus) : "");
    r["version"] = release().release;
    r["operating_system"] = "Linux (simulated)";
    r["architecture"] = "x86_64";
    nodes.push_back(r);
  }
  sendJson(api, res, 200, {{"nodes", nodes}, {"last_update", noVal(nowUnix())}});
}

void SimulatorImpl::handleAdmin(const httplib::Request& req, httplib::Response& res) {
  if (req.remote_addr != "127.0.0.1" && req.remote_addr != "::1")
    return sendText(res, 403, "admin route is loopback-only");
  if (req.method == "GET" && req.path == "/sim/admin/jobs") return sendJson(res, 200, history());
  if (req.method != "POST" || req.path != "/sim/admin/faults")
    return sendText(res, 404, "unknown admin route");
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return sendText(res, 400, "expected a JSON object");
  json errors = json::array();
  try {
    if (body.contains("drop_submit_responses"))
      dropNextSubmitResponses(body["drop_submit_responses"].get<int>());
    if (body.contains("reset_submit_connections"))
      resetNextSubmitConnections(body["reset_submit_connections"].get<int>());
    if (body.contains("fail_requests"))
      failNextRequests(body["fail_requests"].get<int>(), body.value("fail_status", 500));
    if (body.contains("latency_ms"))
      setLatency(std::chrono::milliseconds(body["latency_ms"].get<int64_t>()));
    if (body.value("expire_tokens", false)) expireTokens();
    if (body.contains("end_job")) {
      const json& e = body["end_job"];
      auto ended = endJob(e.at("job").get<std::string>(), e.value("state", "NODE_FAIL"));
      if (!ended) errors.push_back(ended.error().message);
    }
    if (body.value("restart", false)) restart();
    if (body.contains("pause_scheduling")) pauseScheduling(body["pause_scheduling"].get<bool>());
    if (body.contains("duplicate_submits"))
      duplicateNextSubmits(body["duplicate_submits"].get<int>());
    auto record = [&errors](const Status& done) {
      if (!done) errors.push_back(done.error().message);
    };
    if (body.contains("requeue")) {
      const json& r = body["requeue"];
      record(requeueJob(r.at("job").get<std::string>(), r.value("hold", false)));
    }
    if (body.contains("stall_deletes")) {
      const json& d = body["stall_deletes"];
      record(stallDeletes(d.at("job").get<std::string>(), d.value("count", 1),
                          std::chrono::milliseconds(d.value("hold_ms", int64_t{30000}))));
    }
    if (body.contains("purge")) record(purgeJob(body["purge"].at("job").get<std::string>()));
    if (body.contains("lie_reads_ms"))
      lieAboutReads(std::chrono::milliseconds(body["lie_reads_ms"].get<int64_t>()));
    if (body.contains("uncreatable_claims")) {
      const std::string as = body.value("claim_as", "directory");
      if (as != "directory" && as != "dangling_link")
        return sendText(res, 400, "claim_as is \"directory\" or \"dangling_link\"");
      makeNextClaimsUncreatable(body["uncreatable_claims"].get<int>(), as == "dangling_link");
    }
    if (body.contains("never_start")) {
      const json& n = body["never_start"];
      const std::string reason = n.value("reason", "BadConstraints");
      if (n.contains("job")) {
        record(neverStart(n["job"].get<std::string>(), reason));
      } else {
        neverStartNextSubmits(n.value("submits", 1), reason);
      }
    }
  } catch (const json::exception& e) {
    return sendText(res, 400, std::string("bad fault request: ") + e.what());
  }
  res.status = errors.empty() ? 200 : 409;
  res.set_content(json{{"ok", errors.empty()}, {"errors", errors}}.dump(), "application/json");
}

}  // namespace tuneplane::sim
