// A scripted HTTP server on 127.0.0.1:0 and a SlurmRestClient wired to it with recorded
// (never slept) backoff and counting tokens: the harness of the client's tests.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "slurm/rest_client.h"
#include "support/fixtures.h"
#include "support/wait.h"

namespace tuneplane::slurm::scripted {

using nlohmann::json;

struct Seen {
  std::string method, path, body;
  httplib::Headers headers;
  httplib::Params params;
};

// An HTTP server on 127.0.0.1:0 that answers every request through `handler`.
class ScriptedServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&, int call)>;
  explicit ScriptedServer(Handler handler) : handler_(std::move(handler)) {
    auto serve = [this](const httplib::Request& req, httplib::Response& res) {
      int call;
      {
        std::lock_guard lock(mu_);
        seen_.push_back({req.method, req.path, req.body, req.headers, req.params});
        call = static_cast<int>(seen_.size());
      }
      handler_(req, res, call);
    };
    server_.Get(".*", serve);
    server_.Post(".*", serve);
    server_.Delete(".*", serve);
    port_ = server_.bind_to_any_port("127.0.0.1");  // listening from here on
    thread_ = std::thread([this] {
      server_.listen_after_bind();
      listen_returned_ = true;
    });
    // httplib 0.11 ignores a stop() that comes before the listen loop runs: wait for it,
    // so that a test that ends at once does not hang in the destructor's join.
    if (!test::waitUntil([this] { return server_.is_running() || listen_returned_; },
                         std::chrono::seconds(10), std::chrono::milliseconds(1))) {
      ADD_FAILURE() << "the scripted server's accept loop did not start within 10 s";
    }
  }
  ~ScriptedServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  Handler handler_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};
  std::mutex mu_;
  std::vector<Seen> seen_;
};

inline void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

// Hands out "tok-0", then "tok-1" after invalidate(), …
class CountingTokens : public TokenProvider {
 public:
  explicit CountingTokens(std::string prefix = "tok-") : prefix_(std::move(prefix)) {}
  Result<std::string> token() override { return prefix_ + std::to_string(generation_.load()); }
  void invalidate() override { ++generation_; }
  std::optional<int64_t> expiresAt() override { return std::nullopt; }
  std::atomic<int> generation_{0};

 private:
  std::string prefix_;
};

struct Harness {
  std::vector<std::chrono::milliseconds> sleeps;
  CountingTokens* tokens = nullptr;
  std::unique_ptr<SlurmRestClient> client;

  explicit Harness(const std::string& url, std::string token_prefix = "tok-",
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(5000),
                   std::string api_version = "v0.0.45") {
    RestClientOptions options;
    options.api_version = std::move(api_version);
    options.http.base_url = url;
    options.http.request_timeout = timeout;
    options.http.connect_timeout = std::chrono::milliseconds(2000);
    options.user = "tpuser";
    options.random = [] { return 0.5; };
    options.sleep = [this](std::chrono::milliseconds d) { sleeps.push_back(d); };
    auto owned = std::make_unique<CountingTokens>(std::move(token_prefix));
    tokens = owned.get();
    auto created = SlurmRestClient::create(std::move(options), std::move(owned));
    EXPECT_TRUE(created.has_value());
    client = std::move(*created);
  }
};

inline std::string header(const Seen& s, const std::string& name) {
  auto it = s.headers.find(name);
  return it == s.headers.end() ? "" : it->second;
}

}  // namespace tuneplane::slurm::scripted
