// ApiServer: lifecycle, routing (404/405), the guard every route goes through, the answers
// to what the transport refused, the access log and the response helpers. The routes are in
// job_routes.cc and system_routes.cc.
#include "api/api_server.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <stdexcept>

#include "api/http_transport.h"
#include "api/json_views.h"
#include "api/route_templates.h"
#include "attempt/error_codes.h"
#include "control/error_codes.h"
#include "store/error_codes.h"

namespace tuneplane::api {
namespace {

using Steady = std::chrono::steady_clock;

}  // namespace

void sendJson(HttpResponse& res, int status, const nlohmann::json& body) {
  sendJsonText(res, status, dump(body));
}

void sendJsonText(HttpResponse& res, int status, std::string json) {
  res.status = status;
  res.setBody(std::move(json), "application/json; charset=utf-8");
}

void sendErrors(HttpResponse& res, int status, const Errors& errors) {
  sendJson(res, status, errorsJson(errors));
}

void sendError(HttpResponse& res, int status, Error error) {
  sendErrors(res, status, {std::move(error)});
}

void sendStream(HttpResponse& res, int status, std::uint64_t length,
                std::shared_ptr<BodyStream> stream) {
  res.status = status;
  res.body.clear();
  res.stream = std::move(stream);
  res.stream_length = length;
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
      server->options_, [self](HttpRequest& request) { return self->dispatch(request); },
      [self](TransportRefusal why, const HttpRequest& request) {
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
  routes_.push_back({route->method, route->path, guard(route->path, access, std::move(handler))});
}

ApiServer::Guarded ApiServer::guard(std::string_view route, Access access, Handler handler) {
  return [this, route, access, handler = std::move(handler)](
             const HttpRequest& req, HttpResponse& res, RequestContext& context) {
    context.route = route;
    Principal who;
    if (access != Access::kPublic) {
      auto principal = authenticator()->authenticate(req.header("Authorization"));
      if (!principal) {
        res.setHeader("WWW-Authenticate", "Bearer");
        return sendError(res, 401, principal.error());
      }
      who = std::move(*principal);
      context.user = who.user;
      if (access == Access::kAdmin && !who.admin) {
        return sendError(res, 403, {"auth.forbidden", "", "this route is for administrators"});
      }
    }
    try {
      handler(req, res, who);
    } catch (const std::exception& e) {
      res.stream.reset();
      // Nothing below throws across a module boundary; this is the last line (e.g. bad_alloc).
      sendError(res, 500, {"api.internal", "", "internal error; see the server's log"});
    }
  };
}

HttpResponse ApiServer::dispatch(HttpRequest& req) {
  RequestContext context{Steady::now(), {}, {}};
  HttpResponse res;
  try {
    if (auto target = parseTarget(req.target, req.path, req.params); !target) {
      sendError(res, 400, target.error());
    } else {
      route(req, res, context);
    }
  } catch (const std::exception&) {
    res.stream.reset();
    sendError(res, 500, {"api.internal", "", "internal error; see the server's log"});
  }
  if (res.status <= 0) res.status = 500;  // a handler that answered nothing
  // What a browser must not do with an API answer: guess its type, or keep it (it may
  // carry jobs and logs). The console's files set their own.
  if (!res.hasHeader("X-Content-Type-Options")) res.setHeader("X-Content-Type-Options", "nosniff");
  if (!res.hasHeader("Cache-Control")) res.setHeader("Cache-Control", "no-store");
  accessLog(req, res, context, res.stream ? res.stream_length : res.body.size());
  res.head = req.method == "HEAD";
  return res;
}

void ApiServer::route(HttpRequest& req, HttpResponse& res, RequestContext& context) {
  // Two Authorization headers: which one would count is a guess; refuse rather than guess.
  if (req.headerCount("Authorization") > 1) {
    return sendError(res, 400,
                     {"api.bad_request", "Authorization", "more than one Authorization header"});
  }
  const std::string_view method = req.method == "HEAD" ? std::string_view("GET") : req.method;
  std::vector<std::string_view> allowed;
  for (const Route& r : routes_) {
    if (!matchRoute(r.path, req.path, req.path_params)) continue;
    if (r.method == method) return r.run(req, res, context);
    if (std::find(allowed.begin(), allowed.end(), r.method) == allowed.end()) {
      allowed.push_back(r.method);
    }
  }
  req.path_params.clear();
  if (allowed.empty()) return sendError(res, 404, {"api.not_found", "path", "no such route"});
  std::sort(allowed.begin(), allowed.end());
  std::string allow;
  for (const std::string_view m : allowed) {
    allow += (allow.empty() ? "" : ", ") + std::string(m) + (m == "GET" ? ", HEAD" : "");
  }
  res.setHeader("Allow", allow);
  sendError(res, 405,
            {"api.method_not_allowed", "method", "method not allowed here; allowed: " + allow});
}

HttpResponse ApiServer::refusal(TransportRefusal why, const HttpRequest& request) {
  HttpResponse res;
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
      res.setHeader("Retry-After", "1");
      sendError(res, 503,
                {"api.overloaded", "",
                 "too many connections (server.max_connections, or "
                 "server.max_connections_per_client from this client)"});
      break;
  }
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "no-store");
  HttpRequest req;
  req.method = request.method;
  req.path = request.target.substr(0, request.target.find('?'));
  req.remote_addr = request.remote_addr;
  req.proxy_addr = request.proxy_addr;
  accessLog(req, res, RequestContext{}, res.body.size());
  return res;
}

void ApiServer::accessLog(const HttpRequest& req, const HttpResponse& res,
                          const RequestContext& context, std::uint64_t bytes) {
  const bool timed = context.start != Steady::time_point{};
  const double seconds =
      timed ? std::chrono::duration<double>(Steady::now() - context.start).count() : 0.0;
  const std::string_view route = context.route.empty() ? kUnmatchedRoute : context.route;
  deps_.metrics.observeRequest(req.method, route, res.status, seconds);
  if (deps_.access_log) {
    // The path without its query (a query could carry anything a client put there), and
    // never a header: the Authorization header is the token.
    nlohmann::json line = {
        {"time", timeJson(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count())},
        {"remote", req.remote_addr},
        {"proxy", req.proxy_addr.empty() ? nlohmann::json() : nlohmann::json(req.proxy_addr)},
        {"method", req.method},
        {"path", req.path},
        {"route", route},
        {"status", res.status},
        {"bytes", bytes},
        {"ms", seconds * 1000.0},
        {"user", context.user.empty() ? nlohmann::json() : nlohmann::json(context.user)}};
    deps_.access_log(dump(line));
  }
}

}  // namespace tuneplane::api
