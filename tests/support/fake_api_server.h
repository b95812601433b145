// A fake `tuneplane serve` for the client and CLI tests: cpp-httplib on 127.0.0.1 with a
// port the kernel picks, answering /v1 routes from canned replies and recording every
// request (method, path, query, headers, body) so tests assert what the CLI sent.
// Replies are queued per "METHOD /path": each request takes the next one, the last one
// repeats. An unknown route answers 404 api.not_found, as the server does.
// Nothing here can hang a test: a reply may be held (to make the client time out), but only
// until the fake is destroyed, and the destructor stops the server and joins its thread.
// Thread-safety: the recording and the replies are guarded by one mutex; the server runs
// on its own thread.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/wait.h"

namespace tuneplane::testing {

struct RecordedRequest {
  std::string method;
  std::string path;  // without the query
  std::multimap<std::string, std::string> params;
  std::multimap<std::string, std::string, httplib::detail::ci> headers;
  std::string body;

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  std::string param(const std::string& name) const {
    auto it = params.find(name);
    return it == params.end() ? "" : it->second;
  }
};

struct CannedReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json; charset=utf-8";
  bool hold = false;  // answer only when the fake is destroyed (the client times out first)
  std::vector<std::pair<std::string, std::string>> headers = {};  // more response headers
};

class FakeApiServer {
 public:
  FakeApiServer() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res);
    };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    server_.Put(".*", handler);
    server_.Delete(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ > 0) thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() does nothing before the accept loop runs: wait (bounded) until it does.
    if (port_ > 0 && !test::waitUntil([this] { return server_.is_running(); },
                                      std::chrono::seconds(5), std::chrono::milliseconds(10))) {
      ADD_FAILURE() << "the fake API server's accept loop did not start within 5 s";
    }
  }

  ~FakeApiServer() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    released_.notify_all();
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Queues a reply for `method` `path` (the path without its query).
  void on(const std::string& method, const std::string& path, CannedReply reply) {
    std::lock_guard lock(mutex_);
    replies_[method + " " + path].push_back(std::move(reply));
  }
  void on(const std::string& method, const std::string& path, int status, std::string body) {
    on(method, path, CannedReply{status, std::move(body)});
  }

  // Drops the replies still queued for `method` `path` (the route answers 404 again).
  void clear(const std::string& method, const std::string& path) {
    std::lock_guard lock(mutex_);
    replies_.erase(method + " " + path);
  }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // The requests to `method` `path`.
  std::vector<RecordedRequest> requests(const std::string& method, const std::string& path) const {
    std::vector<RecordedRequest> out;
    for (const auto& r : requests()) {
      if (r.method == method && r.path == path) out.push_back(r);
    }
    return out;
  }

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    CannedReply reply{
        404,
        R"({"errors":[{"code":"api.not_found","field":"","message":"no such route or job"}]})"};
    std::unique_lock lock(mutex_);
    requests_.push_back({req.method, req.path, req.params, req.headers, req.body});
    // The canned reply is the answer, byte for byte: cpp-httplib would otherwise cut a 2xx
    // body to the request's Range itself (keeping the canned status).
    const_cast<httplib::Request&>(req).ranges.clear();
    auto it = replies_.find(req.method + " " + req.path);
    if (it != replies_.end() && !it->second.empty()) {
      reply = it->second.front();
      if (it->second.size() > 1) it->second.pop_front();
    }
    if (reply.hold) {
      // Bounded as well: a test's client gives up long before this.
      released_.wait_for(lock, std::chrono::seconds(10), [this] { return stopping_; });
    }
    res.status = reply.status;
    for (const auto& [name, value] : reply.headers) res.set_header(name, value);
    res.set_content(reply.body, reply.content_type.c_str());
  }

  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  bool stopping_ = false;
  std::map<std::string, std::deque<CannedReply>> replies_;
  std::vector<RecordedRequest> requests_;
};

}  // namespace tuneplane::testing
