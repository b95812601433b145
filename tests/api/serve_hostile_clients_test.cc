// `tuneplane serve` against hostile and careless clients, through the real process on
// loopback (issue 16): slow or idle connections must not starve /healthz or an
// authenticated call; the connection caps refuse the excess at once; pipelined requests
// are all answered; a POST without Content-Length has an empty body; malformed framing is
// 400, oversized headers 431 and bodies 413, with the server's memory bounded; a wrong
// method is 405 with Allow; API answers carry nosniff and no-store; two Authorization
// headers are refused. No timing assertion: "answered" means within a generous bound.
#include <httplib.h>

#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve_fixture.h"
#include "staging/stager.h"
#include "support/openapi_validator.h"
#include "support/raw_http_client.h"

namespace tuneplane::api::testing {
namespace {

using test::RawHttpConnection;

constexpr const char* kHostileToken = "hostile-test-token";
// A bound on a hang, never a timing assertion.
constexpr auto kAnswerLimit = 20s;
// How much the serve process's peak RSS may grow over its peak before the oversized requests
// below. The requests send up to kOversizedSendLimit and would cost hundreds of MiB if the
// server buffered them; serve grows by a few MiB (more under AddressSanitizer, whose
// quarantine and shadow memory this bound allows for: measured as a growth, not an absolute,
// because an ASan build starts far higher).
constexpr long kServePeakRssGrowthLimitKiB = 128 * 1024;
// How much an oversized request may send before the test gives up on an answer.
constexpr std::size_t kOversizedSendLimit = 512u * 1024 * 1024;

std::string siteYaml(const std::string& extra = "") {
  return "server:\n  poll_interval: 1s\n" + extra + "  tokens:\n    - user: alice\n" +
         "      token_sha256: " + staging::sha256Hex(kHostileToken) + "\n";
}

std::string authorization() {
  return std::string("Authorization: Bearer ") + kHostileToken + "\r\n";
}

class ServeHostileClientsTest : public ServeProcessFixture {
 protected:
  int start(const std::string& extra = "") {
    site_ = std::make_unique<SiteDir>(sim_->baseUrl(), false, "", siteYaml(extra));
    startServe(*site_, {"--db", site_->dir() + "/tp.db"});
    port_ = waitForPort();
    EXPECT_GT(port_, 0) << readFile(stderr_path_);
    return port_;
  }

  // One request on a fresh connection; the whole answer ("" when none came).
  std::string ask(const std::string& request, const std::string& source = "127.0.0.1") {
    RawHttpConnection c(port_, source);
    if (!c.ok() || !c.send(request)) return "";
    c.readAnswers(1, kAnswerLimit);
    return c.received();
  }

  // /healthz and an authenticated GET through an ordinary client, each within the bound.
  void expectServerAnswers(const std::string& when) {
    httplib::Client http("127.0.0.1", port_);
    http.set_connection_timeout(10, 0);
    http.set_read_timeout(static_cast<time_t>(kAnswerLimit.count()), 0);
    test::validateAnswersOf(http);
    auto health = http.Get("/healthz");
    ASSERT_TRUE(health) << when << ": /healthz did not answer";
    EXPECT_EQ(health->status, 200) << when;
    auto who = http.Get("/v1/whoami", {{"Authorization", std::string("Bearer ") + kHostileToken}});
    ASSERT_TRUE(who) << when << ": /v1/whoami did not answer";
    EXPECT_EQ(who->status, 200) << when;
  }

  long peakRssKiB() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
    }
    return -1;
  }

  // Sends `head`, then `filler` again and again, reading as it goes, until an answer
  // arrives, the server closes, or kOversizedSendLimit bytes went out. The answer's status.
  int sendUntilAnswered(const std::string& head, const std::string& filler) {
    RawHttpConnection c(port_);
    if (!c.ok() || !c.send(head)) return 0;
    ::fcntl(c.fd(), F_SETFL, ::fcntl(c.fd(), F_GETFL) | O_NONBLOCK);
    std::size_t sent = head.size();
    std::size_t offset = 0;
    while (sent < kOversizedSendLimit) {
      pollfd p{c.fd(), POLLIN | POLLOUT, 0};
      if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kAnswerLimit).count())) <= 0) {
        break;
      }
      if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) break;
      const ssize_t n =
          ::send(c.fd(), filler.data() + offset, filler.size() - offset, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN) break;
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        offset = (offset + static_cast<std::size_t>(n)) % filler.size();
      }
    }
    ::fcntl(c.fd(), F_SETFL, ::fcntl(c.fd(), F_GETFL) & ~O_NONBLOCK);
    c.readAnswers(1, kAnswerLimit);
    return RawHttpConnection::firstStatus(c.received());
  }

  std::unique_ptr<SiteDir> site_;
  int port_ = 0;
};

TEST_F(ServeHostileClientsTest, SlowIdleAndBodylessClientsDoNotStarveTheServer) {
  ASSERT_GT(start(), 0);
  constexpr int kEach = 15;  // of four kinds: 60 connections over four client addresses
  std::vector<std::unique_ptr<RawHttpConnection>> slow_headers, slow_bodies, idle, bodyless;
  for (int i = 0; i < kEach; ++i) {
    auto header = std::make_unique<RawHttpConnection>(port_, "127.0.0.2");
    ASSERT_TRUE(header->ok());
    ASSERT_TRUE(header->send("GET /v1/whoami HTTP/1.1\r\nHost: t\r\n"));
    slow_headers.push_back(std::move(header));

    auto body = std::make_unique<RawHttpConnection>(port_, "127.0.0.3");
    ASSERT_TRUE(body->ok());
    ASSERT_TRUE(body->send("POST /v1/validate HTTP/1.1\r\nHost: t\r\n" + authorization() +
                           "Content-Type: application/yaml\r\nContent-Length: 100000\r\n\r\n"
                           "apiVersion"));
    slow_bodies.push_back(std::move(body));

    auto kept = std::make_unique<RawHttpConnection>(port_, "127.0.0.4");
    ASSERT_TRUE(kept->ok());
    ASSERT_TRUE(kept->send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"));
    EXPECT_EQ(kept->readAnswers(1, kAnswerLimit), 1) << "an idle keep-alive's first answer";
    idle.push_back(std::move(kept));

    // A POST without Content-Length or Transfer-Encoding has an empty body (RFC 9112
    // §6.3): answered at once (404: no such job), the connection kept open.
    auto post = std::make_unique<RawHttpConnection>(port_, "127.0.0.5");
    ASSERT_TRUE(post->ok());
    ASSERT_TRUE(post->send("POST /v1/jobs/no-such-job/cancel HTTP/1.1\r\nHost: t\r\n" +
                           authorization() + "\r\n"));
    ASSERT_EQ(post->readAnswers(1, kAnswerLimit), 1) << "a POST without Content-Length";
    EXPECT_EQ(RawHttpConnection::firstStatus(post->received()), 404) << post->received();
    bodyless.push_back(std::move(post));
  }
  expectServerAnswers("with 60 slow and idle connections open");
  // Trickle: a header line, a body byte, on every slow connection, between probes.
  for (int round = 0; round < 3; ++round) {
    for (auto& c : slow_headers) c->send("X-Trickle: " + std::to_string(round) + "\r\n");
    for (auto& c : slow_bodies) c->send(":");
    // Real time passes between a slow client's dribbles, as it would for a real slow client:
    // the server's per-read timeouts run on the real clock, and no event marks "nothing yet".
    std::this_thread::sleep_for(200ms);
    expectServerAnswers("trickle round " + std::to_string(round));
  }
  // None of the slow ones was answered: they are still waiting, not refused.
  for (auto& c : slow_headers) EXPECT_EQ(c->received(), "");
}

TEST_F(ServeHostileClientsTest, AWholeRequestDeadlineEndsATrickle) {
  ASSERT_GT(start("  request_timeout: 1s\n  idle_timeout: 1s\n"), 0);
  RawHttpConnection trickle(port_);
  ASSERT_TRUE(trickle.ok());
  ASSERT_TRUE(trickle.send("GET /healthz HTTP/1.1\r\n"));
  // One header line at a time, each well within any per-read timeout: the whole-request
  // deadline still closes the connection (bounded loop: the test fails if it never does).
  bool closed = false;
  for (int i = 0; i < 200 && !closed; ++i) {
    closed = !trickle.send("X-Slow: " + std::to_string(i) + "\r\n");
    trickle.readUntil([](const std::string&) { return false; }, 100ms);
    closed = closed || trickle.closedByPeer();
  }
  EXPECT_TRUE(closed) << "a trickled request was never cut off";
  EXPECT_EQ(trickle.received(), "");
  RawHttpConnection idle(port_);
  ASSERT_TRUE(idle.ok());
  idle.readUntil([](const std::string&) { return false; }, kAnswerLimit);
  EXPECT_TRUE(idle.closedByPeer()) << "an idle connection was never closed";
}

TEST_F(ServeHostileClientsTest, ConnectionsOverTheCapsAreRefusedAtOnce) {
  ASSERT_GT(start("  max_connections: 6\n  max_connections_per_client: 4\n"), 0);
  std::vector<std::unique_ptr<RawHttpConnection>> held;
  const auto hold = [&](const std::string& source) {
    auto c = std::make_unique<RawHttpConnection>(port_, source);
    EXPECT_TRUE(c->ok());
    c->send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    EXPECT_EQ(c->readAnswers(1, kAnswerLimit), 1);
    EXPECT_EQ(RawHttpConnection::firstStatus(c->received()), 200) << source;
    held.push_back(std::move(c));
  };
  // Refused: a 503 answer or a closed connection, either before the bound.
  const auto expectRefused = [&](const std::string& source, const std::string& why) {
    RawHttpConnection c(port_, source);
    ASSERT_TRUE(c.ok());
    c.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    c.readUntil([](const std::string&) { return false; }, kAnswerLimit);
    const int status = RawHttpConnection::firstStatus(c.received());
    EXPECT_TRUE(status == 503 || (status == 0 && c.closedByPeer())) << why << ": " << c.received();
    EXPECT_TRUE(c.closedByPeer()) << why;
  };
  for (int i = 0; i < 4; ++i) hold("127.0.0.2");
  expectRefused("127.0.0.2", "a fifth connection from one address");
  hold("127.0.0.3");
  hold("127.0.0.3");
  expectRefused("127.0.0.4", "a seventh connection in total");
  held.front()->close();  // a slot frees up once the server sees the close
  EXPECT_TRUE(tuneplane::test::waitUntil(
      [&] {
        return RawHttpConnection::firstStatus(
                   ask("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n", "127.0.0.2")) == 200;
      },
      kAnswerLimit));
}

TEST_F(ServeHostileClientsTest, PipelinedRequestsAreAllAnsweredInOrder) {
  ASSERT_GT(start(), 0);
  RawHttpConnection c(port_);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(
      c.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
             "GET /v1/whoami HTTP/1.1\r\nHost: t\r\n" +
             authorization() +
             "\r\n"
             "GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_EQ(c.readAnswers(3, kAnswerLimit), 3) << c.received();
  const std::string& text = c.received();
  const auto health = text.find("\"status\":\"ok\"");
  const auto alice = text.find("\"user\":\"alice\"");
  const auto missing = text.find("api.not_found");
  ASSERT_NE(health, std::string::npos) << text;
  ASSERT_NE(alice, std::string::npos) << text;
  ASSERT_NE(missing, std::string::npos) << text;
  EXPECT_LT(health, alice);
  EXPECT_LT(alice, missing);
}

TEST_F(ServeHostileClientsTest, ExpectContinueGets100BeforeTheBodyIsSent) {
  ASSERT_GT(start(), 0);
  const std::string body = "{\"apiVersion\": \"tuneplane.io/v1\"}";
  RawHttpConnection c(port_);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send("POST /v1/validate HTTP/1.1\r\nHost: t\r\n" + authorization() +
                     "Content-Type: application/json\r\nExpect: 100-continue\r\n"
                     "Content-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n"));
  c.readUntil([](const std::string& text) { return text.find("\r\n\r\n") != std::string::npos; },
              kAnswerLimit);
  ASSERT_EQ(c.received(), "HTTP/1.1 100 Continue\r\n\r\n");
  c.clearReceived();
  ASSERT_TRUE(c.send(body));
  ASSERT_EQ(c.readAnswers(1, kAnswerLimit), 1);
  EXPECT_EQ(RawHttpConnection::firstStatus(c.received()), 422) << c.received();
}

TEST_F(ServeHostileClientsTest, FramingAndMethodErrorsHaveTheirOwnStatus) {
  ASSERT_GT(start(), 0);
  const auto status = [&](const std::string& request) {
    return RawHttpConnection::firstStatus(ask(request));
  };
  for (const std::string length : {"-1", "abc", "99999999999999999999999"}) {
    EXPECT_EQ(status("POST /v1/validate HTTP/1.1\r\nHost: t\r\n" + authorization() +
                     "Content-Length: " + length + "\r\n\r\n"),
              400)
        << length;
  }
  EXPECT_EQ(status("POST /v1/validate HTTP/1.1\r\nHost: t\r\n" + authorization() +
                   "Content-Length: 2000000\r\n\r\n"),
            413);
  const std::string wrong =
      ask("DELETE /v1/jobs HTTP/1.1\r\nHost: t\r\n" + authorization() + "\r\n");
  EXPECT_EQ(RawHttpConnection::firstStatus(wrong), 405) << wrong;
  EXPECT_NE(RawHttpConnection::lower(wrong).find("\r\nallow: get, head, post\r\n"),
            std::string::npos)
      << wrong;
  const std::string get_validate =
      ask("GET /v1/validate HTTP/1.1\r\nHost: t\r\n" + authorization() + "\r\n");
  EXPECT_EQ(RawHttpConnection::firstStatus(get_validate), 405);
  EXPECT_NE(RawHttpConnection::lower(get_validate).find("\r\nallow: post\r\n"), std::string::npos)
      << get_validate;
  EXPECT_EQ(status("GET /v1/nowhere HTTP/1.1\r\nHost: t\r\n\r\n"), 404);
  // Two Authorization headers: refused, whichever of them is valid.
  const std::string twice = ask("GET /v1/whoami HTTP/1.1\r\nHost: t\r\n" + authorization() +
                                "Authorization: Bearer other\r\n\r\n");
  EXPECT_EQ(RawHttpConnection::firstStatus(twice), 400) << twice;
  EXPECT_NE(twice.find("Authorization"), std::string::npos) << twice;
}

TEST_F(ServeHostileClientsTest, ApiAnswersCarryNosniffAndNoStore) {
  ASSERT_GT(start(), 0);
  for (const std::string& request : std::vector<std::string>{
           "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n", "GET /v1/whoami HTTP/1.1\r\nHost: t\r\n\r\n",
           "GET /v1/whoami HTTP/1.1\r\nHost: t\r\n" + authorization() + "\r\n",
           "GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n"}) {
    const std::string head = RawHttpConnection::lower(ask(request));
    EXPECT_NE(head.find("\r\nx-content-type-options: nosniff\r\n"), std::string::npos) << head;
    EXPECT_NE(head.find("\r\ncache-control: no-store\r\n"), std::string::npos) << head;
  }
  // The console's files keep their own caching (revalidated with an ETag).
  const std::string page = ask("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(RawHttpConnection::firstStatus(page), 200);
  EXPECT_NE(RawHttpConnection::lower(page).find("\r\ncache-control: no-cache\r\n"),
            std::string::npos);
}

TEST_F(ServeHostileClientsTest, HugeHeadersAndEndlessBodiesAreRefusedWithBoundedMemory) {
  ASSERT_GT(start(), 0);
  expectServerAnswers("before the oversized requests");
  const long baseline = peakRssKiB();
  ASSERT_GT(baseline, 0);
  const std::string header_line = "X-Filler: " + std::string(1000, 'h') + "\r\n";
  std::string headers;
  while (headers.size() < 64 * 1024) headers += header_line;
  EXPECT_EQ(sendUntilAnswered("GET /healthz HTTP/1.1\r\nHost: t\r\n", headers), 431);
  std::string chunks;
  while (chunks.size() < 64 * 1024) chunks += "1000\r\n" + std::string(0x1000, 'b') + "\r\n";
  EXPECT_EQ(sendUntilAnswered("POST /v1/validate HTTP/1.1\r\nHost: t\r\n" + authorization() +
                                  "Content-Type: application/yaml\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n",
                              chunks),
            413);
  expectServerAnswers("after the oversized requests");
  const long peak = peakRssKiB();
  ASSERT_GT(peak, 0);
  std::printf("serve's peak RSS: %ld KiB (before the oversized requests: %ld KiB)\n", peak,
              baseline);
  EXPECT_LT(peak - baseline, kServePeakRssGrowthLimitKiB) << "growth of serve's peak RSS in KiB";
}

}  // namespace
}  // namespace tuneplane::api::testing
