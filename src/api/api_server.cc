// ApiServer: lifecycle, the guard every route goes through, the access log and the response
// helpers. The routes are in job_routes.cc and system_routes.cc.
#include "api/api_server.h"

#include <chrono>
#include <csignal>

#include <httplib.h>

#include "api/json_views.h"

namespace tuneplane::api {
namespace {

using Steady = std::chrono::steady_clock;

// What the access log and the metrics need to know about the request this worker thread is
// serving: httplib calls the pre-routing handler, the route and the logger on the same
// thread, one request at a time, so a thread_local carries it without locking.
struct RequestContext {
  Steady::time_point start{};
  const char* route = nullptr;  // the route's template; nullptr until routed
  std::string user;             // authenticated user; "" when none
};
thread_local RequestContext t_request;

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

int statusFor(const std::string& code) {
  if (code == "store.not_found") return 404;
  if (code == "logs.symlink" || code == "logs.not_regular_file") return 409;  // the job's doing
  if (code == "store.already_terminal" || code == "store.not_submit_unknown" ||
      code == "store.job_exists") {
    return 409;
  }
  if (code == "store.bad_limit" || code == "store.bad_continue" || code == "control.no_reason") {
    return 400;
  }
  return 500;
}

ApiServer::ApiServer(ApiDependencies deps, ServerOptions options)
    : deps_(std::move(deps)),
      options_(std::move(options)),
      auth_(options_.tokens),
      server_(std::make_unique<httplib::Server>()) {}

Result<std::unique_ptr<ApiServer>> ApiServer::start(ApiDependencies deps, ServerOptions options) {
  // A client that hangs up mid-response must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<ApiServer> server(new ApiServer(std::move(deps), std::move(options)));
  server->installRoutes();
  httplib::Server& http = *server->server_;
  const ListenAddress& listen = server->options_.listen;
  server->port_ = listen.port == 0
                      ? http.bind_to_any_port(listen.host)
                      : (http.bind_to_port(listen.host, listen.port) ? listen.port : -1);
  if (server->port_ <= 0) {
    return fail("api.listen", "listen",
                "cannot listen on " + listen.host + ":" + std::to_string(listen.port) +
                    " (in use, or not an address of this host)");
  }
  server->thread_ = std::thread([&http] { http.listen_after_bind(); });
  // httplib's stop() does nothing until the listen loop runs: wait for it (bounded), so a
  // stop() right after start() cannot leave the thread serving forever.
  for (int i = 0; i < 5000 && !http.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return server;
}

ApiServer::~ApiServer() {
  stop();
}

std::string ApiServer::baseUrl() const {
  const std::string& host = options_.listen.host;
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port_);
}

void ApiServer::stop() {
  if (stopped_.exchange(true)) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void ApiServer::get(const std::string& pattern, const char* route, Access access, Handler handler) {
  server_->Get(pattern, guard(route, access, std::move(handler)));
}

void ApiServer::post(const std::string& pattern, const char* route, Access access,
                     Handler handler) {
  server_->Post(pattern, guard(route, access, std::move(handler)));
}

std::function<void(const httplib::Request&, httplib::Response&)> ApiServer::guard(const char* route,
                                                                                  Access access,
                                                                                  Handler handler) {
  return [this, route, access, handler = std::move(handler)](const httplib::Request& req,
                                                             httplib::Response& res) {
    t_request.route = route;
    Principal who;
    if (access != Access::kPublic) {
      auto principal = auth_.authenticate(req.get_header_value("Authorization"));
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
      // Nothing below throws across a module boundary; this is the last line (e.g. bad_alloc).
      sendError(res, 500, {"api.internal", "", "internal error; see the server's log"});
    }
  };
}

void ApiServer::installRoutes() {
  httplib::Server& http = *server_;
  http.new_task_queue = [threads = options_.threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(options_.max_body_bytes);
  http.set_read_timeout(std::chrono::seconds(10));
  http.set_write_timeout(std::chrono::seconds(10));
  http.set_keep_alive_max_count(1000);
  // Headers and body go out in separate writes: without TCP_NODELAY, Nagle holds the body
  // until the client's delayed ACK (~40 ms per request on a keep-alive connection).
  http.set_tcp_nodelay(true);
  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_request = RequestContext{Steady::now(), nullptr, {}};
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // httplib calls this for every status >= 400: fill in only what httplib answered itself
  // (no route, a body over the limit, …) so that every error is JSON.
  const httplib::Server::HandlerWithResponse on_error = [this](const httplib::Request&,
                                                               httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    switch (res.status) {
      case 404:
        sendError(res, 404, {"api.not_found", "path", "no such route"});
        break;
      case 405:
        sendError(res, 405, {"api.method_not_allowed", "method", "method not allowed here"});
        break;
      case 413:
        sendError(res, 413,
                  {"api.body_too_large", "body",
                   "the body is larger than " + std::to_string(options_.max_body_bytes) +
                       " bytes (server.max_body_bytes)"});
        break;
      case 414:
        sendError(res, 414, {"api.uri_too_long", "path", "the request line is too long"});
        break;
      default:
        sendError(res, res.status, {"api.bad_request", "", "the request could not be read"});
    }
    return httplib::Server::HandlerResponse::Handled;
  };
  http.set_error_handler(on_error);
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        sendError(res, 500, {"api.internal", "", "internal error; see the server's log"});
      });
  http.set_logger(
      [this](const httplib::Request& req, const httplib::Response& res) { accessLog(req, res); });
  installJobRoutes();
  installSystemRoutes();
  installConsoleRoutes();
}

void ApiServer::accessLog(const httplib::Request& req, const httplib::Response& res) {
  const bool timed = t_request.start != Steady::time_point{};
  const double seconds =
      timed ? std::chrono::duration<double>(Steady::now() - t_request.start).count() : 0.0;
  const char* route = t_request.route != nullptr ? t_request.route : "unmatched";
  deps_.metrics.observeRequest(req.method, route, res.status, seconds);
  if (deps_.access_log) {
    // The path without its query (a query could carry anything a client put there), and
    // never a header: the Authorization header is the token.
    nlohmann::json line = {
        {"time", timeJson(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count())},
        {"remote", req.remote_addr},
        {"method", req.method},
        {"path", req.path},
        {"route", route},
        {"status", res.status},
        {"bytes", res.body.size()},
        {"ms", seconds * 1000.0},
        {"user", t_request.user.empty() ? nlohmann::json() : nlohmann::json(t_request.user)}};
    deps_.access_log(dump(line));
  }
  t_request = RequestContext{};
}

}  // namespace tuneplane::api
