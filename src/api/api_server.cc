// ApiServer: lifecycle, routing (404/405), the guard every route goes through, the answers
// to what the transport refused, the access log and the response helpers. The routes are in
// job_routes.cc and system_routes.cc.
#include "api/api_server.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <stdexcept>

#include <httplib.h>

#include "api/http_transport.h"
#include "api/json_views.h"
#include "api/route_templates.h"
#include "attempt/error_codes.h"
#include "control/error_codes.h"
#include "store/error_codes.h"

namespace tuneplane::api {
namespace {

using Steady = std::chrono::steady_clock;

// What the access log and the metrics need to know about the request this thread is
// serving: dispatch() runs the route and the access log on one worker thread, one request
// at a time, so a thread_local carries it without locking.
struct RequestContext {
  Steady::time_point start{};
  std::string_view route;  // the route's template (route_templates.h); empty until routed
  std::string user;        // authenticated user; "" when none
  std::string proxy;       // the trusted proxy the request came through; "" when direct
  // A streamed body (sendStream), handed to the transport with the answer.
  std::shared_ptr<BodyStream> stream;
  std::uint64_t stream_length = 0;
};
thread_local RequestContext t_request;

TransportResponse toTransport(httplib::Response& res) {
  TransportResponse answer;
  answer.status = res.status > 0 ? res.status : 500;  // a handler that answered nothing
  for (auto& [name, value] : res.headers) answer.headers.emplace_back(name, std::move(value));
  answer.body = std::move(res.body);
  return answer;
}

}  // namespace

void sendJson(httplib::Response& res, int status, const nlohmann::json& body) {
  sendJsonText(res, status, dump(body));
}

void sendJsonText(httplib::Response& res, int status, std::string json) {
  res.status = status;
  // What set_content does, without its copy of the body.
  res.body = std::move(json);
  res.headers.erase("Content-Type");
  res.set_header("Content-Type", "application/json; charset=utf-8");
}

void sendErrors(httplib::Response& res, int status, const Errors& errors) {
  sendJson(res, status, errorsJson(errors));
}

void sendError(httplib::Response& res, int status, Error error) {
  sendErrors(res, status, {std::move(error)});
}

void sendStream(httplib::Response& res, int status, std::uint64_t length,
                std::shared_ptr<BodyStream> stream) {
  res.status = status;
  res.body.clear();
  t_request.stream = std::move(stream);
  t_request.stream_length = length;
}

int statusFor(const std::string& code) {
  if (code == store::codes::kNotFound || code == attempt::codes::kFilesNotFound) return 404;
  // The database could not be had in time (a writer that holds it is stuck): try again.
  if (code == store::codes::kBusy) return 503;
  if (code == attempt::codes::kFilesInvalidPath || code == attempt::codes::kFilesBadPosition) {
    return 400;
  }
  if (code == attempt::codes::kFilesSymlink || code == attempt::codes::kFilesHardLink ||
      code == attempt::codes::kFilesNotRegularFile || code == attempt::codes::kFilesNotDirectory ||
      code == attempt::codes::kFilesIsDirectory || code == attempt::codes::kFilesNotReadable) {
    return 409;  // the job's doing, or the wrong kind of entry for the route
  }
  if (code == attempt::codes::kLogsSymlink || code == attempt::codes::kLogsNotRegularFile) {
    return 409;  // the job's doing
  }
  if (code == store::codes::kAlreadyTerminal || code == store::codes::kNotSubmitUnknown ||
      code == store::codes::kJobExists) {
    return 409;
  }
  if (code == store::codes::kBadLimit || code == store::codes::kBadContinue ||
      code == control::codes::kNoReason) {
    return 400;
  }
  return 500;
}

ApiServer::ApiServer(ApiDependencies deps, HttpServerOptions http, std::vector<ApiToken> tokens)
    : deps_(std::move(deps)),
      options_(std::move(http)),
      auth_(std::make_shared<const Authenticator>(std::move(tokens))) {}

Result<std::unique_ptr<ApiServer>> ApiServer::start(ApiDependencies deps, HttpServerOptions http,
                                                    std::vector<ApiToken> tokens) {
  // A client that hangs up mid-response must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<ApiServer> server(
      new ApiServer(std::move(deps), std::move(http), std::move(tokens)));
  server->installJobRoutes();
  server->installFileRoutes();
  server->installWorkdirRoutes();
  server->installSystemRoutes();
  server->installConsoleRoutes();
  server->installUsageRoutes();
  // The table is what the server serves: every entry has its handler, once.
  for (const auto& route : kRouteTable) {
    const auto n = std::count_if(
        server->routes_.begin(), server->routes_.end(),
        [&](const Route& r) { return r.method == route.method && r.path == route.path; });
    if (n != 1) {
      throw std::logic_error(std::string(route.method) + " " + std::string(route.path) + " has " +
                             std::to_string(n) + " handlers, not 1");
    }
  }
  ApiServer* self = server.get();
  auto started = HttpServerTransport::start(
      server->options_, [self](TransportRequest& request) { return self->dispatch(request); },
      [self](TransportRefusal why, const TransportRequest& request) {
        return self->refusal(why, request);
      });
  if (!started) return tl::unexpected(started.error());
  server->transport_ = std::move(*started);
  server->port_ = server->transport_->port();
  return server;
}

ApiServer::~ApiServer() {
  stop();
}

std::string ApiServer::baseUrl() const {
  const std::string& host = options_.listen.host;
  const bool v6 = host.find(':') != std::string::npos;
  return std::string(options_.tls ? "https://" : "http://") + (v6 ? "[" + host + "]" : host) + ":" +
         std::to_string(port_);
}

Status ApiServer::reloadTls(const std::optional<TlsFiles>& files) {
  return transport_->reloadTls(files);
}

std::optional<TlsFiles> ApiServer::tlsFiles() const {
  return transport_->tlsFiles();
}

void ApiServer::replaceTokens(std::vector<ApiToken> tokens) {
  auto next = std::make_shared<const Authenticator>(std::move(tokens));
  std::lock_guard<std::mutex> lock(auth_mu_);
  auth_ = std::move(next);
}

std::shared_ptr<const Authenticator> ApiServer::authenticator() const {
  std::lock_guard<std::mutex> lock(auth_mu_);
  return auth_;
}

void ApiServer::stop() {
  if (transport_) transport_->stop();
}

void ApiServer::get(std::string_view path, Access access, Handler handler) {
  add("GET", path, access, std::move(handler));
}

void ApiServer::post(std::string_view path, Access access, Handler handler) {
  add("POST", path, access, std::move(handler));
}

void ApiServer::add(std::string_view method, std::string_view path, Access access,
                    Handler handler) {
  const RouteTemplate* route = findRoute(method, path);
  if (route == nullptr) {
    throw std::logic_error(std::string(method) + " " + std::string(path) +
                           " is not in route_templates.h's table");
  }
  routes_.push_back({std::string(route->method), std::regex(std::string(route->pattern)),
                     guard(route->path, access, std::move(handler)), route->path});
}

ApiServer::Guarded ApiServer::guard(std::string_view route, Access access, Handler handler) {
  return [this, route, access, handler = std::move(handler)](const httplib::Request& req,
                                                             httplib::Response& res) {
    t_request.route = route;
    Principal who;
    if (access != Access::kPublic) {
      auto principal = authenticator()->authenticate(req.get_header_value("Authorization"));
      if (!principal) {
        res.set_header("WWW-Authenticate", "Bearer");
        return sendError(res, 401, principal.error());
      }
      who = std::move(*principal);
      t_request.user = who.user;
      if (access == Access::kAdmin && !who.admin) {
        return sendError(res, 403, {"auth.forbidden", "", "this route is for administrators"});
      }
    }
    try {
      handler(req, res, who);
    } catch (const std::exception& e) {
      t_request.stream.reset();
      // Nothing below throws across a module boundary; this is the last line (e.g. bad_alloc).
      sendError(res, 500, {"api.internal", "", "internal error; see the server's log"});
    }
  };
}

TransportResponse ApiServer::dispatch(TransportRequest& request) {
  t_request = RequestContext{Steady::now(), {}, {}, {}, {}, 0};
  httplib::Request req;
  req.method = std::move(request.method);
  req.target = std::move(request.target);
  const auto query = req.target.find('?');
  req.path = httplib::detail::decode_url(req.target.substr(0, query), false);
  if (query != std::string::npos) {
    httplib::detail::parse_query_text(req.target.substr(query + 1), req.params);
  }
  for (auto& [name, value] : request.headers) req.headers.emplace(name, std::move(value));
  req.body = std::move(request.body);
  req.remote_addr = std::move(request.remote_addr);
  req.remote_port = request.remote_port;
  t_request.proxy = std::move(request.proxy_addr);
  httplib::Response res;
  try {
    route(req, res);
  } catch (const std::exception&) {
    t_request.stream.reset();
    sendError(res, 500, {"api.internal", "", "internal error; see the server's log"});
  }
  // What a browser must not do with an API answer: guess its type, or keep it (it may
  // carry jobs and logs). The console's files set their own.
  if (!res.has_header("X-Content-Type-Options"))
    res.set_header("X-Content-Type-Options", "nosniff");
  if (!res.has_header("Cache-Control")) res.set_header("Cache-Control", "no-store");
  std::shared_ptr<BodyStream> stream = std::move(t_request.stream);
  const std::uint64_t stream_length = t_request.stream_length;
  accessLog(req, res, stream ? stream_length : res.body.size());
  TransportResponse answer = toTransport(res);
  answer.head = req.method == "HEAD";
  if (stream) {
    answer.stream = std::move(stream);
    answer.stream_length = stream_length;
  }
  return answer;
}

void ApiServer::route(httplib::Request& req, httplib::Response& res) {
  // Two Authorization headers: which one would count is a guess; refuse rather than guess.
  if (req.get_header_value_count("Authorization") > 1) {
    return sendError(res, 400,
                     {"api.bad_request", "Authorization", "more than one Authorization header"});
  }
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  std::vector<std::string> allowed;
  for (const Route& r : routes_) {
    if (!std::regex_match(req.path, req.matches, r.pattern)) continue;
    if (r.method == method) return r.run(req, res);
    if (std::find(allowed.begin(), allowed.end(), r.method) == allowed.end()) {
      allowed.push_back(r.method);
    }
  }
  req.matches = {};
  if (allowed.empty()) return sendError(res, 404, {"api.not_found", "path", "no such route"});
  std::sort(allowed.begin(), allowed.end());
  std::string allow;
  for (const std::string& m : allowed) {
    allow += (allow.empty() ? "" : ", ") + m + (m == "GET" ? ", HEAD" : "");
  }
  res.set_header("Allow", allow);
  sendError(res, 405,
            {"api.method_not_allowed", "method", "method not allowed here; allowed: " + allow});
}

TransportResponse ApiServer::refusal(TransportRefusal why, const TransportRequest& request) {
  httplib::Response res;
  switch (why) {
    case TransportRefusal::kBadRequest:
      sendError(res, 400,
                {"api.bad_request", "",
                 "the request could not be read (request line, headers or Content-Length)"});
      break;
    case TransportRefusal::kBodyTooLarge:
      if (request.target.substr(0, request.target.find('?')) == kWorkdirUploadPath) {
        sendError(
            res, 413,
            {workdir::codes::kTooLarge, "workdir",
             "the folder's archive is larger than " +
                 std::to_string(workdirBodyLimit(options_.workdir)) +
                 " bytes: the site takes at most " + std::to_string(options_.workdir.max_bytes) +
                 " bytes of files (server.workdir_max_bytes) in at most " +
                 std::to_string(options_.workdir.max_files) +
                 " files and folders (server.workdir_max_files)"});
        break;
      }
      sendError(res, 413,
                {"api.body_too_large", "body",
                 "the body is larger than " + std::to_string(options_.max_body_bytes) +
                     " bytes (server.max_body_bytes)"});
      break;
    case TransportRefusal::kHeaderTooLarge:
      sendError(
          res, 431,
          {"api.headers_too_large", "headers",
           "the request line and headers are larger than " +
               std::to_string(options_.max_header_bytes) + " bytes (server.max_header_bytes)"});
      break;
    case TransportRefusal::kOverloaded:
      res.set_header("Retry-After", "1");
      sendError(res, 503,
                {"api.overloaded", "",
                 "too many connections (server.max_connections, or "
                 "server.max_connections_per_client from this client)"});
      break;
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-store");
  httplib::Request req;
  req.method = request.method;
  req.path = request.target.substr(0, request.target.find('?'));
  req.remote_addr = request.remote_addr;
  t_request = RequestContext{};
  t_request.proxy = request.proxy_addr;
  accessLog(req, res, res.body.size());
  return toTransport(res);
}

void ApiServer::accessLog(const httplib::Request& req, const httplib::Response& res,
                          std::uint64_t bytes) {
  const bool timed = t_request.start != Steady::time_point{};
  const double seconds =
      timed ? std::chrono::duration<double>(Steady::now() - t_request.start).count() : 0.0;
  const std::string_view route = t_request.route.empty() ? kUnmatchedRoute : t_request.route;
  deps_.metrics.observeRequest(req.method, route, res.status, seconds);
  if (deps_.access_log) {
    // The path without its query (a query could carry anything a client put there), and
    // never a header: the Authorization header is the token.
    nlohmann::json line = {
        {"time", timeJson(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count())},
        {"remote", req.remote_addr},
        {"proxy", t_request.proxy.empty() ? nlohmann::json() : nlohmann::json(t_request.proxy)},
        {"method", req.method},
        {"path", req.path},
        {"route", route},
        {"status", res.status},
        {"bytes", bytes},
        {"ms", seconds * 1000.0},
        {"user", t_request.user.empty() ? nlohmann::json() : nlohmann::json(t_request.user)}};
    deps_.access_log(dump(line));
  }
  t_request = RequestContext{};
}

}  // namespace tuneplane::api
