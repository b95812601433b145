// slurmrestd's /slurmdb/<version>/ routes (its openapi/slurmdbd plugin), loaded with
// --accounting (SimulatorOptions::accounting): GET jobs/ and job/{id} answer from the
// simulator's slurmdbd, one record per run (slurmdb_ledger.h), in the shapes of transcript
// 21_slurmdb_jobs. Without --accounting every /slurmdb/ path answers 404 with slurmrestd's
// text, as a site without slurmdbd does (22_no_slurmdbd); /slurm/ routes are unaffected.
//
// What jobs/ reads of its query: `users` (repeated; a comma in one answers 500 "Unspecified
// error", as 26.05.3 does), `start_time`/`end_time` (the runs that overlap the window, as
// slurmdbd's usage_start/usage_end select; none: every run), `skip_steps` (no steps). Every
// run is listed whatever `show_duplicates` says (a window shows them on the real one too);
// other filters are not simulated. The plugin's other routes (associations, users, …) are not
// simulated and answer 404 text. Every user's records are visible to every token (slurmdbd
// without PrivateData=jobs, as the test cluster runs).
#include <cstdlib>

#include "sim/simulator_impl.h"

namespace tuneplane::sim {
namespace {

using nlohmann::json;

constexpr std::string_view kSlurmdbPrefix = "/slurmdb/";

bool truthy(const std::string& value) {
  return value == "true" || value == "1" || value == "yes";
}

// A Unix time parameter; 0 when absent or not a number.
int64_t timeParam(const httplib::Request& req, const char* key) {
  if (!req.has_param(key)) return 0;
  const std::string text = req.get_param_value(key);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::strtoll(text.c_str(), nullptr, 10);
}

}  // namespace

void SimulatorImpl::routeSlurmdb(const httplib::Request& req, httplib::Response& res) {
  if (!options_.accounting) return sendText(res, 404, kUnknownEndpointText);
  const std::string versioned = req.path.substr(kSlurmdbPrefix.size());
  const std::string version = versioned.substr(0, versioned.find('/'));
  const SimApi* api = nullptr;
  for (const SimApi* served : served_) {
    if (served->name == version) api = served;
  }
  if (api == nullptr || versioned.size() == version.size()) {
    return sendText(res, 404, kUnknownEndpointText);
  }
  std::string route = versioned.substr(version.size() + 1);
  if (!route.empty() && route.back() == '/') route.pop_back();
  const bool jobs = route == "jobs";
  const bool one = route.rfind("job/", 0) == 0 && route.size() > 4;
  if (req.method != "GET" || (!jobs && !one)) {
    return sendText(res, 404, kUnknownEndpointText);
  }
  std::string user;
  bool has_token = false;
  const bool auth_ok = authenticate(req, &user, &has_token);
  if (!has_token) return sendText(res, 401, "Authentication failure");
  json body = {{"jobs", json::array()}};
  body["meta"] = meta(*api);
  body["meta"]["plugin"]["type"] = "openapi/slurmdbd";
  body["meta"]["plugin"]["name"] = "Slurm OpenAPI slurmdbd";
  body["meta"]["plugin"]["accounting_storage"] = "accounting_storage/slurmdbd";
  if (!auth_ok) {
    ApiError e{511, kErrAuth, "Authentication failure", "_auth_failure", ""};
    body["errors"] = json::array({e.toJson()});
    return sendJson(*api, res, 511, std::move(body));
  }
  const bool with_steps =
      !(req.has_param("skip_steps") && truthy(req.get_param_value("skip_steps")));
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = nowUnix();
  if (one) {
    const std::string id = route.substr(4);
    const bool numeric = id.size() <= 10 && id.find_first_not_of("0123456789") == std::string::npos;
    const uint32_t job_id =
        numeric ? static_cast<uint32_t>(std::strtoul(id.c_str(), nullptr, 10)) : 0;
    // The job's latest run, as slurmdbd answers a lookup without show_duplicates.
    const SlurmdbRun* latest = nullptr;
    for (const auto& run : slurmdb_.runs()) {
      if (job_id != 0 && run.job_id == job_id) latest = &run;
    }
    if (latest != nullptr) {
      body["jobs"].push_back(slurmdbRecord(*latest, api->name, cluster_.name, now, with_steps));
    } else {
      body["warnings"] = json::array(
          {{{"description", "slurmdb_jobs_get() found nothing"}, {"source", "_dump_jobs"}}});
    }
    return sendJson(*api, res, 200, std::move(body));
  }
  std::vector<std::string> users;
  for (auto [it, end] = req.params.equal_range("users"); it != end; ++it) {
    if (it->second.find(',') != std::string::npos) {
      return sendText(res, 500, "Unspecified error");  // a CSV list: 21_slurmdb_jobs
    }
    users.push_back(it->second);
  }
  const int64_t start = timeParam(req, "start_time");
  const int64_t end = timeParam(req, "end_time");
  for (const auto& run : slurmdb_.runs()) {
    if (selectsRun(run, users, start, end, now)) {
      body["jobs"].push_back(slurmdbRecord(run, api->name, cluster_.name, now, with_steps));
    }
  }
  if (body["jobs"].empty()) {
    body["warnings"] = json::array(
        {{{"description", "slurmdb_jobs_get() found nothing"}, {"source", "_dump_jobs"}}});
  }
  sendJson(*api, res, 200, std::move(body));
}

}  // namespace tuneplane::sim
