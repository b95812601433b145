// ApiServer: the HTTP API of `tuneplane serve` (/v1, docs/operators.md, "tuneplane serve and
// the /v1 API") over HttpServerTransport (http_transport.h: Boost.Beast, event-driven, with
// connection caps, deadlines and size limits, and optional TLS). It routes each request (a wrong
// method on a known path is 405 with Allow), authenticates every /v1 call
// (authenticator.h), scopes jobs to their owner (another user's job is "not found"; an admin
// sees all), checks bodies before any parser sees them (body_checks.h), answers every
// 4xx/5xx as {"errors": [...]}, writes one JSON line per request to the access log (never a
// token, never a query's values of Authorization), and counts requests for /metrics.
//
//   request ─► transport (limits) ─► worker: dispatch (clock starts) ─► route: auth ─►
//              checks ─► JobService / store / log reader ─► JSON ─► access log + metrics
//
// The handlers take the API's own HttpRequest and fill its HttpResponse (http_message.h:
// the route's {…} segments in `path_params`, the decoded query in `params`); what a request
// carries beside them (its route, its user, when it started) travels with it in a
// RequestContext, never in thread-local state, so a handler may hand work to another thread.
// Lifetime: start() binds and serves on its own threads; stop() (or the destructor) stops
// accepting, lets running handlers finish and joins. Thread-safety: handlers run on up to
// HttpServerOptions::threads threads at once; every collaborator must be thread-safe (JobService,
// JobStore, Metrics are); replaceTokens and reloadTls may run while requests are served.
// REQUIRES: the dependencies outlive the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/authenticator.h"
#include "api/body_stream.h"
#include "api/http_message.h"
#include "api/log_source.h"
#include "api/metrics.h"
#include "api/server_config.h"
#include "api/slurm_queue.h"
#include "api/usage_service.h"
#include "attempt/output_files.h"
#include "common/clock.h"
#include "common/result.h"
#include "control/job_service.h"
#include "pipeline/attempt_launcher.h"
#include "store/job_store.h"

namespace tuneplane::api {

// How GET /v1/jobs/{id}/files reads one page of a folder (attempt::listOutputDirectory).
using FileLister = std::function<Result<attempt::ListPage>(
    const attempt::AreaLocation& area, const std::vector<std::string>& path,
    const attempt::ListPosition& from, std::size_t limit)>;

struct ApiDependencies {
  control::JobService& jobs;
  store::JobStore& store;               // jobs by phase (/metrics), readiness
  pipeline::AttemptLauncher& launcher;  // POST /v1/validate, capabilities
  Metrics& metrics;
  LogReader logs = readLog;
  // /readyz: whether slurmrestd answers (nullptr: not checked).
  std::function<Status()> slurm_ready;
  // After a job was accepted: wake the control loop so it stages at once (may be empty).
  std::function<void()> job_submitted;
  // More /metrics text (the control loop's figures); may be empty.
  std::function<std::string()> extra_metrics;
  // One JSON line per request; may be empty (no access log).
  std::function<void(const std::string&)> access_log;
  // GET /v1/doctor (admin): runs doctor's checks, in a bounded time, and returns the report
  // (doctor::reportToJson). Error "api.busy" while another run is under way. Empty: 501.
  std::function<Result<nlohmann::json>()> doctor;
  // The step an attempt started from, read from its staging dir for GET /v1/jobs/{id}
  // (attempt::readResumeStep; nullptr: never read).
  ResumeStepReader resume_step = readResumeStep;
  // Slurm's queue (slurm_queue.h), asked only for jobs that wait in it: why and until when
  // (job_waiting.h). The argument: a wall-clock time the snapshot should be newer than.
  // Empty: what the control loop stored only.
  std::function<std::shared_ptr<const QueueSnapshot>(int64_t newer_than_ms)> pending_queue;
  // The Slurm REST API version in use, for GET /v1/capabilities (slurm::choiceJson: the
  // configured one, the one negotiated, what the server offers, what degrades). Empty: the
  // configured slurm.api_version alone.
  std::function<nlohmann::json()> slurm_api;
  // One page of a folder of a job's outputs (a seam: tests hold listings in flight).
  FileLister list_files = attempt::listOutputDirectory;
  // GET /v1/usage and /metrics' tuneplane_usage_* (usage_service.h): slurmdbd's records.
  // Null: usage answers 501 usage.accounting_unavailable, /metrics has no usage lines.
  std::shared_ptr<UsageService> usage = nullptr;
};

class HttpServerTransport;
enum class TransportRefusal;

class ApiServer {
 public:
  // Binds and starts serving with `http` (handed to the transport whole) and the users of
  // `tokens`. Errors: "api.listen" (cannot bind, naming the address), "api.tls" (the
  // certificate or key cannot be loaded).
  static Result<std::unique_ptr<ApiServer>> start(ApiDependencies deps, HttpServerOptions http,
                                                  std::vector<ApiToken> tokens);
  ~ApiServer();  // stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  int port() const { return port_; }
  std::string baseUrl() const;  // https:// with TLS
  // Re-reads server.tls's files (at `files`, the paths as the site file now names them) for
  // new connections; on an error the old ones stay (HttpServerTransport::reloadTls).
  Status reloadTls(const std::optional<TlsFiles>& files);
  // The TLS files in use; nullopt without TLS.
  std::optional<TlsFiles> tlsFiles() const;
  // The users from now on (SIGHUP): a request authenticates against the tokens in force when
  // it arrives. Cannot fail: the caller validated them (parseServerConfig).
  void replaceTokens(std::vector<ApiToken> tokens);
  // Stops accepting, lets running handlers finish, joins. Idempotent.
  void stop();

 private:
  ApiServer(ApiDependencies deps, HttpServerOptions http, std::vector<ApiToken> tokens);
  std::shared_ptr<const Authenticator> authenticator() const;
  void installRoutes();         // api_server.cc: middleware and system routes
  void installJobRoutes();      // job_routes.cc
  void installFileRoutes();     // file_routes.cc: a job's outputs
  void installWorkdirRoutes();  // workdir_routes.cc: POST /v1/workdirs, a job's code
  void installSystemRoutes();   // system_routes.cc
  void installConsoleRoutes();  // console_routes.cc: the web console's files
  void installUsageRoutes();    // usage_routes.cc: GET /v1/usage

  // How a route is guarded.
  enum class Access { kPublic, kUser, kAdmin };
  using Handler = std::function<void(const HttpRequest&, HttpResponse&, const Principal&)>;
  // Registers the handler of one route of route_templates.h's table, by its template; the
  // router matches the table's pattern. Throws std::logic_error for a route not in the table.
  void get(std::string_view path, Access access, Handler handler);
  void post(std::string_view path, Access access, Handler handler);
  void add(std::string_view method, std::string_view path, Access access, Handler handler);
  // What the access log and the metrics need of a request besides the request itself.
  struct RequestContext {
    std::chrono::steady_clock::time_point start{};  // when dispatch began; {} for a refusal
    std::string_view route;  // the route's template (route_templates.h); empty until routed
    std::string user;        // the authenticated user; "" when none
  };
  using Guarded = std::function<void(const HttpRequest&, HttpResponse&, RequestContext&)>;
  Guarded guard(std::string_view route, Access access, Handler handler);
  // On a worker thread: routes one request and answers it.
  HttpResponse dispatch(HttpRequest& request);
  // On an I/O thread: the JSON answer to what the transport refused.
  HttpResponse refusal(TransportRefusal why, const HttpRequest& request);
  void route(HttpRequest& req, HttpResponse& res, RequestContext& context);
  // `bytes`: the body's size (a streamed body's promised length).
  void accessLog(const HttpRequest& req, const HttpResponse& res, const RequestContext& context,
                 std::uint64_t bytes);

  struct Route {
    std::string_view method;
    std::string_view path;  // the template (route_templates.h), matched by matchRoute
    Guarded run;
  };

  ApiDependencies deps_;
  HttpServerOptions options_;
  mutable std::mutex auth_mu_;
  std::shared_ptr<const Authenticator> auth_;  // swapped whole by replaceTokens
  std::vector<Route> routes_;
  std::unique_ptr<HttpServerTransport> transport_;
  int port_ = 0;
};

// Response helpers shared by the route files.
void sendJson(HttpResponse& res, int status, const nlohmann::json& body);
// `json` is JSON text already (jobJsonText).
void sendJsonText(HttpResponse& res, int status, std::string json);
void sendErrors(HttpResponse& res, int status, const Errors& errors);
void sendError(HttpResponse& res, int status, Error error);
// Answers `status` with a body of `length` bytes read from `stream` (body_stream.h) a chunk
// at a time after the handler returns; the handler sets the other headers on `res`.
void sendStream(HttpResponse& res, int status, std::uint64_t length,
                std::shared_ptr<BodyStream> stream);
// The HTTP status for an error code from below (store.not_found → 404, …; else 500).
int statusFor(const std::string& code);

}  // namespace tuneplane::api
