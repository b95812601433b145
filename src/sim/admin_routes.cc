// The simulator's loopback-only admin routes: POST /sim/admin/faults injects the faults of
// simulator.h (one JSON object, a key per fault), GET /sim/admin/jobs answers the history —
// for tests that reach the simulator over HTTP only. Dispatched by http_routes.cc.
#include "sim/simulator_impl.h"

namespace tuneplane::sim {

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
    if (body.contains("preempt")) {
      const json& p = body["preempt"];
      auto preempted = preemptJob(p.at("job").get<std::string>(),
                                  std::chrono::seconds(p.value("grace_s", int64_t{30})));
      if (!preempted) errors.push_back(preempted.error().message);
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
