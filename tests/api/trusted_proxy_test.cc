// Behind a reverse proxy (server.trusted_proxies), on loopback with raw connections: the
// per-client cap counts the client X-Forwarded-For names, not the proxy, so one client
// holding its share cannot starve another behind the same proxy; a peer that is not a
// trusted proxy is counted as itself whatever header it sends; the access log names the
// client and the proxy. Every wait is bounded (kProxiedAnswerLimit).
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "../catalog/temp_dir.h"
#include "../sim/sim_test_support.h"
#include "api/network_ranges.h"
#include "api_fixture.h"
#include "support/raw_http_client.h"
#include "support/test_files.h"
#include "support/wait.h"

namespace tuneplane::api::testing {
namespace {

using namespace std::chrono_literals;
using test::RawHttpConnection;

constexpr auto kProxiedAnswerLimit = 10s;
constexpr int kPerClient = 4;
constexpr const char* kProxy = "127.0.0.1";

class TrustedProxyTest : public ApiFixture {
 protected:
  void tune(ApiDependencies&, HttpServerOptions& options) override {
    options.max_connections_per_client = kPerClient;
    if (trusted_) options.trusted_proxies = {*parseNetworkRange(kProxy, "test")};
  }

  // A POST the proxy forwards for `client` and holds open: its headers are read (the server
  // says 100 Continue once they passed every check, the client's share among them), its
  // body never comes. Null when the server did not take it.
  std::unique_ptr<RawHttpConnection> hold(const std::string& client) {
    auto c = std::make_unique<RawHttpConnection>(server_->port(), kProxy);
    EXPECT_TRUE(c->ok());
    c->send("POST /v1/validate HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: " + client +
            "\r\nAuthorization: Bearer " + kAliceToken +
            "\r\nContent-Type: application/yaml\r\nContent-Length: 64\r\n"
            "Expect: 100-continue\r\n\r\n");
    c->readUntil([](const std::string& text) { return text.find("\r\n\r\n") != std::string::npos; },
                 kProxiedAnswerLimit);
    if (RawHttpConnection::firstStatus(c->received()) != 100) {
      ADD_FAILURE() << "not held for " << client << ": " << c->received();
      return nullptr;
    }
    return c;
  }
  // GET /v1/whoami from `source`, with `forwarded_for` (none when empty); the answer's text.
  std::string ask(const std::string& source, const std::string& forwarded_for) {
    RawHttpConnection c(server_->port(), source);
    EXPECT_TRUE(c.ok());
    c.send("GET /v1/whoami HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " +
           std::string(kAliceToken) + "\r\n" +
           (forwarded_for.empty() ? "" : "X-Forwarded-For: " + forwarded_for + "\r\n") +
           "Connection: close\r\n\r\n");
    c.readUntil([](const std::string&) { return false; }, kProxiedAnswerLimit);
    return c.received();
  }
  // The access log line of the request answered `status` from `remote`; empty when none.
  json accessLineOf(const std::string& remote, int status) {
    json found;
    tuneplane::test::waitUntil(  // the line is written after the answer
        [&] {
          for (const auto& line : accessLines()) {
            const json j = json::parse(line, nullptr, false);
            if (j.is_object() && j["remote"] == remote && j["status"] == status) {
              found = j;
              return true;
            }
          }
          return false;
        },
        10s, 10ms);
    return found;
  }

  bool trusted_ = true;
};

TEST_F(TrustedProxyTest, OneClientsShareBehindTheProxyDoesNotStarveAnother) {
  std::vector<std::unique_ptr<RawHttpConnection>> held;
  for (int i = 0; i < kPerClient; ++i) {
    held.push_back(hold("198.51.100.7"));
    ASSERT_NE(held.back(), nullptr);
  }
  // The client's next request is refused; another client through the same proxy is served.
  const std::string refused = ask(kProxy, "198.51.100.7");
  EXPECT_EQ(RawHttpConnection::firstStatus(refused), 503) << refused;
  EXPECT_NE(refused.find("api.overloaded"), std::string::npos) << refused;
  const std::string served = ask(kProxy, "203.0.113.5, 198.51.100.8");
  EXPECT_EQ(RawHttpConnection::firstStatus(served), 200) << served;
  // The access log names the forwarded client (the rightmost untrusted hop) and the proxy.
  const json line = accessLineOf("198.51.100.8", 200);
  ASSERT_TRUE(line.is_object()) << "no access log line for 198.51.100.8";
  EXPECT_EQ(line["proxy"], kProxy);
  EXPECT_EQ(accessLineOf("198.51.100.7", 503)["proxy"], kProxy);
  // A share comes back when a held request goes.
  held.front()->close();
  EXPECT_TRUE(tuneplane::test::waitUntil(
      [&] { return RawHttpConnection::firstStatus(ask(kProxy, "198.51.100.7")) == 200; },
      kProxiedAnswerLimit));
}

// Issue 45, item 2: a streamed download (a file's content) ends like every other answer — its
// client's share goes back — so a kept-alive proxy connection that carries a download for one
// client and then a request for another (nginx's upstream keepalive, in normal use) leaks
// nothing. Before, each such connection kept one share of the first client for good.
TEST_F(TrustedProxyTest, AStreamedDownloadGivesItsClientsShareBack) {
  const std::string id = submitJob();
  tuneplane::testing::TempDir root;
  const std::string attempt_dir = root.path() + "/jobs/" + id + "/attempts/1";
  std::filesystem::create_directories(attempt_dir + "/output");
  test::writeFile(attempt_dir + "/output/f.bin", "0123456789");
  addRunningAttempt(id, attempt_dir);
  const auto request = [&](const std::string& target, const std::string& client) {
    return "GET " + target + " HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: " + client +
           "\r\nAuthorization: Bearer " + kAliceToken + "\r\n\r\n";
  };
  std::vector<std::unique_ptr<RawHttpConnection>> proxied;
  for (int i = 0; i < kPerClient; ++i) {
    auto c = std::make_unique<RawHttpConnection>(server_->port(), kProxy);
    ASSERT_TRUE(c->ok());
    c->send(request("/v1/jobs/" + id + "/files/content?path=f.bin", "198.51.100.7"));
    ASSERT_EQ(c->readAnswers(1, kProxiedAnswerLimit), 1) << c->received();
    ASSERT_EQ(RawHttpConnection::firstStatus(c->received()), 200) << c->received();
    ASSERT_NE(c->received().find("0123456789"), std::string::npos);
    c->clearReceived();
    c->send(request("/v1/jobs", "203.0.113.5"));  // the next request: another client's
    ASSERT_EQ(c->readAnswers(1, kProxiedAnswerLimit), 1) << c->received();
    EXPECT_EQ(RawHttpConnection::firstStatus(c->received()), 200) << c->received();
    proxied.push_back(std::move(c));  // kept alive, as the proxy keeps them
  }
  // Every download is over: the first client has its whole share again.
  const std::string answer = ask(kProxy, "198.51.100.7");
  EXPECT_EQ(RawHttpConnection::firstStatus(answer), 200) << answer;
}

// Issue 45: an IPv6 client is counted per /64 (server.client_ipv6_prefix), so one rotating
// addresses inside its network gets one share, not one per address.
TEST_F(TrustedProxyTest, IPv6ClientsAreCountedPerNetwork) {
  std::vector<std::unique_ptr<RawHttpConnection>> held;
  for (int i = 0; i < kPerClient; ++i) {
    held.push_back(hold("2001:db8:1:2::" + std::to_string(i + 1)));
    ASSERT_NE(held.back(), nullptr);
  }
  const std::string refused = ask(kProxy, "2001:db8:1:2:ffff::9");
  EXPECT_EQ(RawHttpConnection::firstStatus(refused), 503) << refused;
  const std::string other_network = ask(kProxy, "2001:db8:1:3::1");
  EXPECT_EQ(RawHttpConnection::firstStatus(other_network), 200) << other_network;
}

TEST_F(TrustedProxyTest, APeerThatIsNotATrustedProxyIsItselfWhateverItSends) {
  std::vector<std::unique_ptr<RawHttpConnection>> held;
  for (int i = 0; i < kPerClient; ++i) {
    held.push_back(hold("198.51.100.7"));
    ASSERT_NE(held.back(), nullptr);
  }
  // 127.0.0.9 claims to be the client whose share is used up: it is counted as itself.
  const std::string answer = ask("127.0.0.9", "198.51.100.7");
  EXPECT_EQ(RawHttpConnection::firstStatus(answer), 200) << answer;
  const json line = accessLineOf("127.0.0.9", 200);
  ASSERT_TRUE(line.is_object());
  EXPECT_TRUE(line["proxy"].is_null());
}

class UntrustedProxyTest : public TrustedProxyTest {
 protected:
  UntrustedProxyTest() { trusted_ = false; }
};

TEST_F(UntrustedProxyTest, WithoutTrustedProxiesTheHeaderChangesNothing) {
  // Four connections from the proxy's address, each claiming another client: all count
  // against 127.0.0.1, so a fifth is refused at once, whoever it claims to be.
  std::vector<std::unique_ptr<RawHttpConnection>> held;
  for (int i = 0; i < kPerClient; ++i) {
    auto c = std::make_unique<RawHttpConnection>(server_->port(), kProxy);
    ASSERT_TRUE(c->ok());
    c->send("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 198.51.100." + std::to_string(i) +
            "\r\n\r\n");
    ASSERT_EQ(c->readAnswers(1, kProxiedAnswerLimit), 1);
    held.push_back(std::move(c));
  }
  const std::string refused = ask(kProxy, "203.0.113.77");
  EXPECT_EQ(RawHttpConnection::firstStatus(refused), 503) << refused;
  const json line = accessLineOf(kProxy, 200);
  ASSERT_TRUE(line.is_object());
  EXPECT_TRUE(line["proxy"].is_null());
}

}  // namespace
}  // namespace tuneplane::api::testing
