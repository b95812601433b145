// The REST surface of the simulator: the dispatch of slurmrestd's routes under
// /slurm/<version>/ for every version it serves (sim_api.h), its auth and error shapes (as in
// tests/data/slurm/'s transcripts of each version), GET /openapi/v3 and ping. The routes
// themselves: job_routes.cc (jobs), cluster_routes.cc (partitions, nodes, licenses, conf),
// slurmdb_routes.cc; the loopback-only admin route for faults: admin_routes.cc.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <thread>

#include "common/jwt.h"
#include "sim/simulator_impl.h"

namespace tuneplane::sim {
namespace {

using nlohmann::json;

constexpr const char* kPrefix = "/slurm/";

}  // namespace

json SimulatorImpl::meta(const SimApi& api) const {
  json m = api.meta(release(), "127.0.0.1:" + std::to_string(port_) + "(fd:9)", cluster_.name);
  // 19_identity: a slurmrestd whose slurmctld stores accounting in slurmdbd says so.
  if (storesAccounting()) m["plugin"]["accounting_storage"] = "accounting_storage/slurmdbd";
  return m;
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

void SimulatorImpl::sendText(httplib::Response& res, int status, const std::string& text) {
  res.status = status;
  res.set_content(text, "text/plain");
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
  if (method == "GET" && is("conf")) return routeConf(api, res, auth_ok);
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

}  // namespace tuneplane::sim
