// SlurmRestClient against loopback servers: a scripted HTTP server (every operation, auth
// refresh, retries, token hygiene) and raw TCP/Unix servers that misbehave on purpose (the
// transport classes). Backoff sleeps are injected and recorded: no test sleeps.
#include "slurm/rest_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "scripted_server.h"
#include "support/fixtures.h"

namespace tuneplane::slurm {
namespace {

using nlohmann::json;
using scripted::CountingTokens;
using scripted::Harness;
using scripted::header;
using scripted::reply;
using scripted::ScriptedServer;
using test::transcriptResponseBody;

TEST(BackoffDelay, DoublesUpToTheCapWithBoundedJitter) {
  RetryPolicy p{5, std::chrono::milliseconds(100), std::chrono::milliseconds(1000)};
  EXPECT_EQ(backoffDelay(p, 0, 0.0).count(), 50);
  EXPECT_EQ(backoffDelay(p, 0, 1.0).count(), 100);
  EXPECT_EQ(backoffDelay(p, 1, 0.0).count(), 100);
  EXPECT_EQ(backoffDelay(p, 3, 1.0).count(), 800);
  EXPECT_EQ(backoffDelay(p, 10, 1.0).count(), 1000);
  EXPECT_EQ(backoffDelay(p, 10, 0.0).count(), 500);
}

TEST(ClassifyCurlFailure, MapsEachCodeToItsTransportClass) {
  EXPECT_EQ(http::classifyCurlFailure(CURLE_COULDNT_CONNECT, false, 0), TransportClass::kNotSent);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_COULDNT_RESOLVE_HOST, false, 0),
            TransportClass::kNotSent);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_SSL_CONNECT_ERROR, true, 0), TransportClass::kNotSent);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_OPERATION_TIMEDOUT, false, 0),
            TransportClass::kNotSent);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_OPERATION_TIMEDOUT, true, 0), TransportClass::kUnknown);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_OPERATION_TIMEDOUT, false, 120),
            TransportClass::kUnknown);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_GOT_NOTHING, true, 100), TransportClass::kUnknown);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_RECV_ERROR, true, 100), TransportClass::kUnknown);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_SEND_ERROR, true, 0), TransportClass::kUnknown);
  EXPECT_EQ(http::classifyCurlFailure(CURLE_PARTIAL_FILE, true, 100), TransportClass::kUnknown);
}

TEST(SlurmRestClient, RejectsAnUnsupportedUrlScheme) {
  RestClientOptions options;
  options.http.base_url = "ftp://x";
  auto client = SlurmRestClient::create(options, std::make_unique<CountingTokens>());
  ASSERT_FALSE(client.has_value());
  EXPECT_EQ(client.error().code, "slurm.config");
}

TEST(SlurmRestClient, PingSendsAuthHeadersAndDecodes) {
  ScriptedServer server([](auto&, auto& res, int) {
    reply(res, 200, transcriptResponseBody("01_ping.json", "ping without"));
  });
  Harness h(server.url());
  auto ping = h.client->ping();
  ASSERT_TRUE(ping.has_value()) << ping.error().describe();
  EXPECT_TRUE(ping->anyResponding());
  EXPECT_EQ(ping->release, "26.05.3");
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, "/slurm/v0.0.45/ping/");
  EXPECT_EQ(header(seen[0], "X-SLURM-USER-TOKEN"), "tok-0");
  EXPECT_EQ(header(seen[0], "X-SLURM-USER-NAME"), "tpuser");
  EXPECT_EQ(header(seen[0], "Accept"), "application/json");
}

TEST(SlurmRestClient, SubmitPostsTheBodyAndReturnsTheReceipt) {
  ScriptedServer server([](auto&, auto& res, int) {
    reply(res, 200, transcriptResponseBody("02_submit_single.json", "submit"));
  });
  Harness h(server.url());
  json body = {{"script", "#!/bin/bash\ntrue\n"}, {"job", {{"name", "x"}}}};
  auto receipt = h.client->submit(body);
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  EXPECT_EQ(receipt->job_id, 2u);
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].path, "/slurm/v0.0.45/job/submit");
  EXPECT_EQ(json::parse(seen[0].body), body);
  EXPECT_EQ(header(seen[0], "Content-Type"), "application/json");
}

TEST(SlurmRestClient, SubmitRejectionCarriesSlurmErrorAndIsNotRetried) {
  ScriptedServer server([](auto&, auto& res, int) {
    reply(res, 422, transcriptResponseBody("13c_submit_errors.json", "constraint exists but not"));
  });
  Harness h(server.url());
  auto receipt = h.client->submit(json::object());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().error.code, "slurm.rejected");
  EXPECT_EQ(receipt.error().http_status, 422);
  EXPECT_EQ(receipt.error().slurm_error_number, 2014);
  EXPECT_EQ(receipt.error().transport, TransportClass::kRejected);
  EXPECT_EQ(server.seen().size(), 1u);
  EXPECT_EQ(receipt.error().attempts, 1);
}

TEST(SlurmRestClient, SubmitIsNeverRetriedOn5xx) {
  ScriptedServer server([](auto&, auto& res, int) { reply(res, 503, json::object()); });
  Harness h(server.url());
  auto receipt = h.client->submit(json::object());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().error.code, "slurm.server_error");
  EXPECT_EQ(server.seen().size(), 1u);
  EXPECT_TRUE(h.sleeps.empty());
}

TEST(SlurmRestClient, SubmitSuccessWithoutReadableJobIdIsOutcomeUnknown) {
  ScriptedServer server([](auto&, auto& res, int) {
    res.status = 200;
    res.set_content("{\"meta\": {}, \"trunc", "application/json");
  });
  Harness h(server.url());
  auto receipt = h.client->submit(json::object());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().error.code, "slurm.outcome_unknown");
  EXPECT_EQ(receipt.error().transport, TransportClass::kUnknown);
}

TEST(SlurmRestClient, GetJobBySluidReturnsEveryHetComponent) {
  ScriptedServer server([](auto&, auto& res, int) {
    reply(res, 200, transcriptResponseBody("11_hetjob.json", "GET /job/{sluid of component 0}"));
  });
  Harness h(server.url());
  auto jobs = h.client->getJob("sCC1M8VPP7X700");
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[1].het_job_offset.value(), 1);
  EXPECT_EQ(server.seen()[0].path, "/slurm/v0.0.45/job/sCC1M8VPP7X700");
}

TEST(SlurmRestClient, GetUnknownJobIsJobNotFound) {
  ScriptedServer server([](auto&, auto& res, int) {
    reply(res, 404, transcriptResponseBody("13b_job_lookup_errors.json", "unknown numeric"));
  });
  Harness h(server.url());
  auto jobs = h.client->getJob("999999");
  ASSERT_FALSE(jobs.has_value());
  EXPECT_EQ(jobs.error().error.code, "slurm.job_not_found");
  EXPECT_EQ(jobs.error().slurm_error_number, 2017);
  EXPECT_EQ(server.seen().size(), 1u);  // a 4xx is not retried
}

// Issue 37, defect 1: only Slurm's error 2017 says a job does not exist. A bare 404 (a proxy
// that routes nowhere) and a success without the job and without Slurm's error prove nothing.
TEST(SlurmRestClient, ABare404OrAnEmptyAnswerIsNotSlurmsNoSuchJob) {
  ScriptedServer bare([](auto&, auto& res, int) {
    res.status = 404;
    res.set_content("<html>Not Found</html>", "text/html");
  });
  Harness h(bare.url());
  auto jobs = h.client->getJob("sCC1M8VPKSJX00");
  ASSERT_FALSE(jobs.has_value());
  EXPECT_NE(jobs.error().error.code, "slurm.job_not_found") << jobs.error().describe();
  auto cancelled = h.client->cancel("sCC1M8VPKSJX00", std::nullopt);
  ASSERT_FALSE(cancelled.has_value());
  EXPECT_NE(cancelled.error().error.code, "slurm.job_not_found");

  ScriptedServer empty([](auto&, auto& res, int) {
    reply(res, 200, json::parse(R"({"jobs": [], "errors": [], "warnings": []})"));
  });
  Harness e(empty.url());
  auto none = e.client->getJob("sCC1M8VPKSJX00");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().error.code, "slurm.bad_response") << none.error().describe();
}

// Issue 37, defect 7: slurmrestd's 502 naming Slurm's "Unable to contact slurm controller
// (connect failure)" says slurmctld never took the request: not an unknown outcome. (The real
// answer of a slurmrestd 26.05.3 whose slurmctld was stopped: transcript 18.)
TEST(SlurmRestClient, AControllerThatCouldNotBeContactedIsNotAnUnknownOutcome) {
  ScriptedServer server([](auto&, auto& res, int) {
    reply(res, 502,
          transcriptResponseBody("18_controller_down.json",
                                 "POST /job/submit while slurmctld is stopped"));
  });
  Harness h(server.url());
  auto receipt = h.client->submit(json::object());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().slurm_error_number, slurm::kSlurmControllerConnectFailure);
  EXPECT_EQ(receipt.error().transport, TransportClass::kRejected);
  EXPECT_EQ(server.seen().size(), 1u);  // a submit is never repeated by the client
}

TEST(SlurmRestClient, ListJobsPassesUpdateTimeAndReportsNoChanges) {
  ScriptedServer server([](const httplib::Request& req, auto& res, int) {
    reply(res, 200,
          req.has_param("update_time")
              ? transcriptResponseBody("12_jobs_list.json", "GET /jobs/?update_time=<last_update f")
              : transcriptResponseBody("12_jobs_list.json", "GET /jobs/ (no update_time)"));
  });
  Harness h(server.url());
  auto all = h.client->listJobs(std::nullopt);
  ASSERT_TRUE(all.has_value());
  EXPECT_FALSE(all->unchanged);
  EXPECT_FALSE(all->jobs.empty());
  auto none = h.client->listJobs(1796226205);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->unchanged);
  EXPECT_EQ(server.seen()[1].params.find("update_time")->second, "1796226205");
}

TEST(SlurmRestClient, ListJobStatesRepeatsJobIdAndSplitsLongLists) {
  ScriptedServer server([](auto&, auto& res, int) {
    reply(res, 200, transcriptResponseBody("12b_jobs_state_query.json", "job_id=1&job_id=2"));
  });
  Harness h(server.url());
  auto two = h.client->listJobStates({1, 2});
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->size(), 2u);
  auto first = server.seen()[0];
  EXPECT_EQ(first.params.count("job_id"), 2u);
  for (auto [it, end] = first.params.equal_range("job_id"); it != end; ++it) {
    EXPECT_EQ(it->second.find(','), std::string::npos);
  }
  std::vector<uint64_t> many(300);
  for (size_t i = 0; i < many.size(); ++i) many[i] = i + 1;
  ASSERT_TRUE(h.client->listJobStates(many).has_value());
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1].params.count("job_id"), SlurmRestClient::kMaxIdsPerStateQuery);
  EXPECT_EQ(seen[2].params.count("job_id"), 300 - SlurmRestClient::kMaxIdsPerStateQuery);
}

TEST(SlurmRestClient, CancelTurnsStatusRefusalsIntoErrors) {
  ScriptedServer server([](const httplib::Request& req, auto& res, int) {
    if (req.path.ends_with("sCC1M8VPG9ZZZZ")) {
      reply(res, 200, transcriptResponseBody("13e_delete_unknown_sluid.json", "DELETE"));
    } else if (req.path.ends_with("sCC1M8VPMRAC00")) {
      reply(
          res, 200,
          transcriptResponseBody("07_pending_held_then_cancel.json", "DELETE /job/{sluid} again"));
    } else {
      reply(res, 200,
            transcriptResponseBody("07_pending_held_then_cancel.json", "DELETE /job/{sluid}"));
    }
  });
  Harness h(server.url());
  EXPECT_TRUE(h.client->cancel("sCC1M8VPMT9G00", "SIGTERM").has_value());
  EXPECT_EQ(server.seen()[0].method, "DELETE");
  EXPECT_EQ(server.seen()[0].params.find("signal")->second, "SIGTERM");
  auto unknown = h.client->cancel("sCC1M8VPG9ZZZZ", std::nullopt);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().error.code, "slurm.job_not_found");
  EXPECT_EQ(unknown.error().slurm_error_number, 2017);
  auto done = h.client->cancel("sCC1M8VPMRAC00", std::nullopt);
  ASSERT_FALSE(done.has_value());
  EXPECT_EQ(done.error().error.code, "slurm.already_completing");
  EXPECT_EQ(done.error().slurm_error_number, 2021);
}

TEST(SlurmRestClient, PartitionsAndNodes) {
  ScriptedServer server([](const httplib::Request& req, auto& res, int) {
    if (req.path.ends_with("/partitions/")) {
      reply(res, 200, json::parse(R"({"partitions": [{"name": "gpu",
          "nodes": {"configured": "gpu[1-2]"}, "partition": {"state": ["UP"]}}]})"));
    } else {
      reply(res, 200, json::parse(R"({"nodes": [{"name": "gpu1", "features": ["h100"]}]})"));
    }
  });
  Harness h(server.url());
  auto parts = h.client->listPartitions();
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->at(0).name, "gpu");
  auto nodes = h.client->listNodes();
  ASSERT_TRUE(nodes.has_value());
  EXPECT_EQ(nodes->at(0).features, std::vector<std::string>{"h100"});
}

TEST(SlurmRestClient, ReadsAreRetriedWithBackoffOn5xx) {
  ScriptedServer server([](auto&, auto& res, int call) {
    if (call <= 2) {
      reply(res, call == 1 ? 503 : 500, json::object());
    } else {
      reply(res, 200, transcriptResponseBody("01_ping.json", "ping without"));
    }
  });
  Harness h(server.url());
  auto ping = h.client->ping();
  ASSERT_TRUE(ping.has_value()) << ping.error().describe();
  EXPECT_EQ(server.seen().size(), 3u);
  RetryPolicy policy;
  ASSERT_EQ(h.sleeps.size(), 2u);
  EXPECT_EQ(h.sleeps[0], backoffDelay(policy, 0, 0.5));
  EXPECT_EQ(h.sleeps[1], backoffDelay(policy, 1, 0.5));
}

TEST(SlurmRestClient, ReadsGiveUpAfterMaxAttempts) {
  ScriptedServer server([](auto&, auto& res, int) { reply(res, 503, json::object()); });
  Harness h(server.url());
  auto jobs = h.client->listJobs(std::nullopt);
  ASSERT_FALSE(jobs.has_value());
  EXPECT_EQ(jobs.error().error.code, "slurm.server_error");
  EXPECT_EQ(jobs.error().http_status, 503);
  EXPECT_EQ(server.seen().size(), static_cast<size_t>(RetryPolicy{}.max_attempts));
  EXPECT_EQ(jobs.error().attempts, RetryPolicy{}.max_attempts);  // every request counted
}

TEST(SlurmRestClient, ExpiredTokenIsRefreshedOnceThenTheRequestIsRetried) {
  ScriptedServer server([](const httplib::Request& req, auto& res, int) {
    if (req.get_header_value("X-SLURM-USER-TOKEN") == "tok-0") {
      reply(res, 511,
            transcriptResponseBody("13d_auth_errors_other_endpoints.json", "POST /job/submit"));
    } else {
      reply(res, 200, transcriptResponseBody("02_submit_single.json", "submit"));
    }
  });
  Harness h(server.url());
  auto receipt = h.client->submit(json::object());
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  EXPECT_EQ(h.tokens->generation_.load(), 1);
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(header(seen[1], "X-SLURM-USER-TOKEN"), "tok-1");
}

TEST(SlurmRestClient, AuthFailureAfterOneRefreshIsAuthFailed) {
  for (int status : {401, 511, 500}) {
    ScriptedServer server([status](auto&, auto& res, int) {
      if (status == 401) {
        res.status = 401;
        res.set_content("Authentication failure", "text/plain");
      } else {
        reply(res, status,
              transcriptResponseBody("13d_auth_errors_other_endpoints.json", "GET /jobs/ expired"));
      }
    });
    Harness h(server.url());
    auto jobs = h.client->listJobs(std::nullopt);
    ASSERT_FALSE(jobs.has_value()) << status;
    EXPECT_EQ(jobs.error().error.code, "slurm.auth_failed") << status;
    EXPECT_EQ(jobs.error().http_status, status);
    EXPECT_EQ(server.seen().size(), 2u) << status;  // once, refresh, once more: no backoff loop
    EXPECT_EQ(jobs.error().attempts, 2) << status;
    EXPECT_TRUE(h.sleeps.empty());
  }
}

TEST(SlurmRestClient, PingRefusingTheTokenCountsAsAuthFailure) {
  ScriptedServer server([](auto&, auto& res, int) {
    reply(res, 200, transcriptResponseBody("13a_auth_errors.json", "expired token"));
  });
  Harness h(server.url());
  auto ping = h.client->ping();
  ASSERT_FALSE(ping.has_value());
  EXPECT_EQ(ping.error().error.code, "slurm.auth_failed");
  EXPECT_EQ(server.seen().size(), 2u);
}

TEST(SlurmRestClient, TokenNeverAppearsInErrorsOrLogs) {
  const std::string secret = "SECRET-TOKEN-8c1f0e";
  // A hostile server that echoes the token back in every text field it controls.
  ScriptedServer server([&secret](const httplib::Request& req, auto& res, int) {
    std::string echoed = req.get_header_value("X-SLURM-USER-TOKEN");
    json body = {
        {"errors",
         {{{"error_number", 1007}, {"error", "bad token " + echoed}, {"description", echoed}}}}};
    reply(res, req.method == "POST" ? 511 : 422, body);
    (void)secret;
  });
  auto out = std::make_shared<std::ostringstream>();
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*out);
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("capture", sink);
  logger->set_level(spdlog::level::trace);
  spdlog::set_default_logger(logger);

  Harness h(server.url(), secret);
  std::vector<SlurmError> errors;
  if (auto r = h.client->submit(json::object()); !r) errors.push_back(r.error());
  if (auto r = h.client->getJob("1"); !r) errors.push_back(r.error());
  if (auto r = h.client->cancel("sX", std::nullopt); !r) errors.push_back(r.error());
  Harness closed("http://127.0.0.1:1", secret);
  if (auto r = closed.client->ping(); !r) errors.push_back(r.error());
  spdlog::set_default_logger(previous);

  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].error.code, "slurm.auth_failed");
  for (const auto& e : errors) {
    for (const std::string& text : {e.error.code, e.error.field, e.error.message, e.slurm_error,
                                    e.slurm_description, e.describe()}) {
      EXPECT_EQ(text.find(secret), std::string::npos) << text;
    }
  }
  EXPECT_FALSE(out->str().empty());  // the retries and the refresh were logged…
  EXPECT_EQ(out->str().find(secret), std::string::npos) << out->str();  // …without the token
}

// ---- Raw servers that misbehave, for the transport classes ----

int listenLoopback(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::listen(fd, 16), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

// A port nothing listens on: bound, then closed.
int closedPort() {
  int port = 0;
  int fd = listenLoopback(&port);
  ::close(fd);
  return port;
}

std::string readRequestHead(int fd) {
  const timeval limit{30, 0};  // a bound on a client that never sends, not a timing check
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::string data;
  char buf[4096];
  while (data.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

// Accepts connections until destroyed; each is handled by `on_connection` (which may close
// it at once, hang, or answer). Counts connections.
class RawServer {
 public:
  RawServer(int listen_fd, std::function<void(int)> on_connection)
      : fd_(listen_fd), on_connection_(std::move(on_connection)) {
    thread_ = std::thread([this] {
      for (;;) {
        int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) return;  // shut down
        ++connections;
        on_connection_(client);
        held_.push_back(client);
      }
    });
  }
  static RawServer tcp(std::function<void(int)> on_connection, int* port) {
    return RawServer(listenLoopback(port), std::move(on_connection));
  }
  // Reads each request's head, then closes the connection without a reply: the request may
  // have been acted on.
  static RawServer closingAfterRequest(int* port) {
    return tcp(
        [](int fd) {
          readRequestHead(fd);
          ::shutdown(fd, SHUT_RDWR);
        },
        port);
  }
  ~RawServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
    for (int c : held_) ::close(c);
  }
  std::atomic<int> connections{0};

 private:
  int fd_;
  std::function<void(int)> on_connection_;
  std::thread thread_;
  std::vector<int> held_;  // connections left open (the "never answers" server)
};

TEST(TransportClass, ClosedPortIsNotSentAndReadsRetry) {
  Harness h("http://127.0.0.1:" + std::to_string(closedPort()));
  auto ping = h.client->ping();
  ASSERT_FALSE(ping.has_value());
  EXPECT_EQ(ping.error().error.code, "slurm.not_sent");
  EXPECT_EQ(ping.error().transport, TransportClass::kNotSent);
  EXPECT_EQ(ping.error().curl_code, CURLE_COULDNT_CONNECT);
  EXPECT_EQ(h.sleeps.size(), static_cast<size_t>(RetryPolicy{}.max_attempts - 1));
}

TEST(TransportClass, ClosedPortSubmitIsNotSentAndNotRetried) {
  Harness h("http://127.0.0.1:" + std::to_string(closedPort()));
  auto receipt = h.client->submit(json::object());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().transport, TransportClass::kNotSent);
  EXPECT_TRUE(h.sleeps.empty());
}

TEST(TransportClass, CancelRetriesOnlyWhenNotSent) {
  Harness h("http://127.0.0.1:" + std::to_string(closedPort()));
  auto refused = h.client->cancel("sCC1M8VPMT9G00", std::nullopt);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(h.sleeps.size(), static_cast<size_t>(RetryPolicy{}.max_attempts - 1));

  int port = 0;
  auto server = RawServer::closingAfterRequest(&port);
  Harness h2("http://127.0.0.1:" + std::to_string(port));
  auto unknown = h2.client->cancel("sCC1M8VPMT9G00", std::nullopt);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().transport, TransportClass::kUnknown);
  EXPECT_EQ(server.connections.load(), 1);
}

TEST(TransportClass, AcceptThenCloseWithoutReplyIsUnknown) {
  int port = 0;
  auto server = RawServer::closingAfterRequest(&port);
  Harness h("http://127.0.0.1:" + std::to_string(port));
  auto receipt = h.client->submit(json::object());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().error.code, "slurm.outcome_unknown");
  EXPECT_EQ(receipt.error().transport, TransportClass::kUnknown);
  EXPECT_EQ(receipt.error().curl_code, CURLE_GOT_NOTHING);
  EXPECT_EQ(server.connections.load(), 1);  // a submit is never repeated
  EXPECT_TRUE(h.sleeps.empty());
}

TEST(TransportClass, ServerThatNeverAnswersTimesOutAsUnknown) {
  int port = 0;
  auto server = RawServer::tcp([](int fd) { readRequestHead(fd); }, &port);
  Harness h("http://127.0.0.1:" + std::to_string(port), "tok-", std::chrono::milliseconds(300));
  auto receipt = h.client->submit(json::object());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().transport, TransportClass::kUnknown);
  EXPECT_EQ(receipt.error().curl_code, CURLE_OPERATION_TIMEDOUT);
  EXPECT_EQ(server.connections.load(), 1);
}

TEST(TransportClass, UnixSocketUrlReachesTheServer) {
  std::string path =
      (std::filesystem::temp_directory_path() / ("tp-rest-" + std::to_string(::getpid()) + ".sock"))
          .string();
  std::filesystem::remove(path);
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  std::string body = transcriptResponseBody("01_ping.json", "ping without").dump();
  std::string request_seen;
  {
    RawServer server(fd, [&](int client) {
      request_seen = readRequestHead(client);
      std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      ::send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::shutdown(client, SHUT_RDWR);
    });
    Harness h("unix://" + path);
    auto ping = h.client->ping();
    ASSERT_TRUE(ping.has_value()) << ping.error().describe();
    EXPECT_EQ(ping->cluster, "tp");
  }
  std::filesystem::remove(path);
  EXPECT_EQ(request_seen.rfind("GET /slurm/v0.0.45/ping/ HTTP/1.1", 0), 0u) << request_seen;
}

}  // namespace
}  // namespace tuneplane::slurm
