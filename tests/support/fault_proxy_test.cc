// The fault-injecting proxy (fault_proxy.h) on loopback: it relays both ways to a TCP or a
// Unix-socket upstream; cut() ends every connection (an RST when asked) and the proxy goes on
// accepting; freeze() holds every byte until thaw() or its end; delay() holds each chunk;
// freezeAfter() stops one connection right after the chunk that follows its arm and leaves the
// others alone; in HTTP mode lie() answers the matching requests itself, bodies included,
// keeping the framing of the requests after them on the same connection. Every wait is
// bounded; what must not arrive is checked with a short poll, never a sleep as the assertion.
#include "support/fault_proxy.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/wait.h"

namespace tuneplane::test {
namespace {

using namespace std::chrono_literals;

// An echo server on a Unix socket or on 127.0.0.1 (port 0): every byte read is written back.
// One thread per connection; ends when destroyed.
class EchoServer {
 public:
  explicit EchoServer(const std::string& unix_path = "") {
    if (unix_path.empty()) {
      fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in in{};
      in.sin_family = AF_INET;
      in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t length = sizeof in;
      EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&in), sizeof in), 0);
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&in), &length);
      port_ = ntohs(in.sin_port);
    } else {
      fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un un{};
      un.sun_family = AF_UNIX;
      std::snprintf(un.sun_path, sizeof un.sun_path, "%s", unix_path.c_str());
      EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&un), sizeof un), 0);
    }
    EXPECT_EQ(::listen(fd_, 16), 0);
    acceptor_ = std::thread([this] {
      for (;;) {
        pollfd p{fd_, POLLIN, 0};
        if (stop_) return;
        if (::poll(&p, 1, 100) <= 0) continue;
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) continue;
        workers_.emplace_back([this, c] {
          char buffer[4096];
          for (;;) {
            pollfd q{c, POLLIN, 0};
            if (stop_) break;
            if (::poll(&q, 1, 100) <= 0) continue;
            const ssize_t n = ::read(c, buffer, sizeof buffer);
            if (n <= 0) break;
            (void)!::write(c, buffer, static_cast<size_t>(n));
          }
          ::close(c);
        });
      }
    });
  }
  ~EchoServer() {
    stop_ = true;
    acceptor_.join();
    for (auto& w : workers_) w.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::vector<std::thread> workers_;  // touched by the acceptor alone until it is joined
};

// A client of the proxy: connects to 127.0.0.1:port.
class Peer {
 public:
  explicit Peer(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(static_cast<uint16_t>(port));
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&in), sizeof in) == 0;
  }
  ~Peer() { ::close(fd_); }
  bool connected() const { return connected_; }
  void send(const std::string& text) {
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  // What arrives within `limit` (until `want` bytes have); "" when nothing does. `closed` says
  // whether the connection ended (EOF or reset) instead.
  std::string receive(size_t want, std::chrono::milliseconds limit, bool* closed = nullptr) {
    std::string got;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (got.size() < want && std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n <= 0) {
        if (closed) *closed = true;
        break;
      }
      got.append(buffer, static_cast<size_t>(n));
    }
    return got;
  }
  // The echo of `text`, bounded.
  std::string roundTrip(const std::string& text) {
    send(text);
    return receive(text.size(), 10s);
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

std::unique_ptr<FaultProxy> startProxy(FaultProxy::Options options) {
  std::string error;
  auto proxy = FaultProxy::start(std::move(options), error);
  EXPECT_NE(proxy, nullptr) << error;
  return proxy;
}

TEST(FaultProxy, RelaysBothWaysToATcpAndToAUnixSocketUpstream) {
  EchoServer tcp;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(tcp.port()), .http = false});
  ASSERT_NE(proxy, nullptr);
  Peer a(proxy->port());
  ASSERT_TRUE(a.connected());
  EXPECT_EQ(a.roundTrip("hello over tcp"), "hello over tcp");
  const std::string big(300000, 'x');  // more than one chunk, more than a socket buffer
  a.send(big);
  EXPECT_EQ(a.receive(big.size(), 20s), big);

  char dir[] = "/tmp/tp-proxy-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/echo.sock";
  {
    EchoServer unix_echo(path);
    auto unix_proxy = startProxy({.upstream = ProxyUpstream::unixSocket(path), .http = false});
    ASSERT_NE(unix_proxy, nullptr);
    Peer b(unix_proxy->port());
    EXPECT_EQ(b.roundTrip("hello over a unix socket"), "hello over a unix socket");
    EXPECT_EQ(unix_proxy->counters().accepted, 1);
  }
  std::filesystem::remove_all(dir);
}

TEST(FaultProxy, AnUpstreamThatRefusesEndsTheClientsConnection) {
  int port = 0;
  {
    EchoServer gone;  // bound, then closed: nothing listens there any more
    port = gone.port();
  }
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(port), .http = false});
  ASSERT_NE(proxy, nullptr);
  Peer a(proxy->port());
  bool closed = false;
  a.send("anyone?");
  EXPECT_EQ(a.receive(1, 10s, &closed), "");
  EXPECT_TRUE(closed);
  EXPECT_EQ(proxy->counters().upstream_failed, 1);
}

TEST(FaultProxy, CutEndsEveryConnectionAndTheProxyStillAccepts) {
  EchoServer echo;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(echo.port()), .http = false});
  ASSERT_NE(proxy, nullptr);
  Peer a(proxy->port()), b(proxy->port());
  EXPECT_EQ(a.roundTrip("a"), "a");
  EXPECT_EQ(b.roundTrip("b"), "b");
  EXPECT_EQ(proxy->cut(true), 2);
  bool closed = false;
  EXPECT_EQ(a.receive(1, 10s, &closed), "");
  EXPECT_TRUE(closed) << "a cut connection ends";
  Peer c(proxy->port());
  EXPECT_EQ(c.roundTrip("after the cut"), "after the cut");
  EXPECT_EQ(proxy->counters().cut, 2);
}

TEST(FaultProxy, FreezeHoldsEveryByteUntilThawThenDeliversThem) {
  EchoServer echo;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(echo.port()), .http = false});
  ASSERT_NE(proxy, nullptr);
  Peer a(proxy->port());
  EXPECT_EQ(a.roundTrip("before"), "before");
  proxy->freeze(10min);
  a.send("held");
  EXPECT_EQ(a.receive(4, 300ms), "") << "nothing passes a frozen proxy";
  Peer late(proxy->port());  // a new connection is frozen too
  late.send("late");
  EXPECT_EQ(late.receive(4, 300ms), "");
  proxy->thaw();
  EXPECT_EQ(a.receive(4, 10s), "held");
  EXPECT_EQ(late.receive(4, 10s), "late");
}

TEST(FaultProxy, AFreezeEndsByItself) {
  EchoServer echo;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(echo.port()), .http = false});
  ASSERT_NE(proxy, nullptr);
  Peer a(proxy->port());
  proxy->freeze(500ms);
  EXPECT_EQ(a.roundTrip("thawed by its end"), "thawed by its end");
}

TEST(FaultProxy, DelayHoldsEachChunkForItsWindow) {
  EchoServer echo;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(echo.port()), .http = false});
  ASSERT_NE(proxy, nullptr);
  Peer a(proxy->port());
  proxy->delay(1500ms, 1min);
  a.send("slow");
  EXPECT_EQ(a.receive(4, 200ms), "") << "held 1.5 s each way";
  EXPECT_EQ(a.receive(4, 20s), "slow");
  proxy->delay(0ms, 0ms);
  EXPECT_EQ(a.roundTrip("fast again"), "fast again");
}

TEST(FaultProxy, FreezeAfterStopsOneConnectionRightAfterTheChunkThatFollowsItsArm) {
  EchoServer echo;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(echo.port()), .http = false});
  ASSERT_NE(proxy, nullptr);
  std::atomic<int> strikes{0};
  proxy->freezeAfter(std::string("BEGIN\0", 6), "B", 10min, [&] { ++strikes; });
  Peer a(proxy->port()), b(proxy->port());
  EXPECT_EQ(a.roundTrip("SELECT 1"), "SELECT 1");
  EXPECT_EQ(a.roundTrip(std::string("QBEGIN\0", 7)), std::string("QBEGIN\0", 7));  // armed
  EXPECT_EQ(a.roundTrip("Qmore"), "Qmore");  // not a Bind: still relayed
  EXPECT_FALSE(proxy->struck());
  a.send("Block");  // relayed, and then the connection stops
  EXPECT_EQ(a.receive(5, 500ms), "") << "its answer is held";
  EXPECT_TRUE(proxy->struck());
  EXPECT_EQ(strikes, 1);
  // Others go on, even one that sends the arm: the trigger is spent.
  EXPECT_EQ(b.roundTrip(std::string("QBEGIN\0", 7)), std::string("QBEGIN\0", 7));
  EXPECT_EQ(b.roundTrip("Bfree"), "Bfree");
  EXPECT_EQ(proxy->counters().frozen_after, 1);
  proxy->thaw();
  EXPECT_EQ(a.receive(5, 10s), "Block");
}

TEST(FaultProxy, AnArmedConnectionThatEndsGivesTheTriggerToTheNext) {
  EchoServer echo;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(echo.port()), .http = false});
  ASSERT_NE(proxy, nullptr);
  proxy->freezeAfter("arm", "then", 10min);
  {
    Peer a(proxy->port());
    EXPECT_EQ(a.roundTrip("arm"), "arm");  // armed; it ends before its "then"
  }
  Peer b(proxy->port());
  // Until the proxy has seen `a` end, `b`'s arm may find the trigger taken: sent until armed.
  const bool struck = waitUntil(
      [&] {
        EXPECT_EQ(b.roundTrip("arm"), "arm");
        b.send("then");
        return b.receive(4, 200ms) == "";
      },
      25s, 50ms);
  EXPECT_TRUE(struck) << "b's \"then\" was never frozen";
  EXPECT_TRUE(proxy->struck());
  EXPECT_EQ(proxy->counters().frozen_after, 1);
}

TEST(FaultProxy, ADisarmedTriggerNeverStrikesNotEvenOnAConnectionItArmed) {
  EchoServer echo;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(echo.port()), .http = false});
  ASSERT_NE(proxy, nullptr);
  std::atomic<int> strikes{0};
  proxy->freezeAfter("arm", "then", 10min, [&] { ++strikes; });
  Peer a(proxy->port());
  EXPECT_EQ(a.roundTrip("arm"), "arm");
  proxy->disarm();
  EXPECT_EQ(a.roundTrip("then"), "then");
  EXPECT_FALSE(proxy->struck());
  EXPECT_EQ(strikes, 0);
}

// An HTTP upstream standing in for slurmrestd: it answers every route truly and counts them.
class TruthfulSlurm {
 public:
  TruthfulSlurm() {
    auto truth = [this](const httplib::Request& req, httplib::Response& res) {
      ++answered_;
      last_body_ = req.body;
      res.set_content(R"({"jobs":[{"job_id":7}],"errors":[],"warnings":[]})", "application/json");
    };
    server_.Get(".*", truth);
    server_.Post(".*", truth);
    server_.Delete(".*", truth);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(waitUntil([this] { return server_.is_running(); }, 10s, 10ms))
        << "the upstream's accept loop did not start";
  }
  ~TruthfulSlurm() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  int answered() const { return answered_; }
  std::string lastBody() const {
    std::lock_guard lock(mu_);
    return last_body_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> answered_{0};
  mutable std::mutex mu_;
  std::string last_body_;
};

TEST(FaultProxy, LiesAnswerSlurmsReadsAndTheRestGoesThroughOnTheSameConnection) {
  TruthfulSlurm slurm;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(slurm.port()), .http = true});
  ASSERT_NE(proxy, nullptr);
  httplib::Client client("127.0.0.1", proxy->port());
  client.set_keep_alive(true);  // one connection: lies and truths interleave on it
  client.set_read_timeout(10, 0);
  const std::string api = "/slurm/v0.0.45";
  proxy->lie(slurmReadLies(api), 10min);

  auto state = client.Get(api + "/jobs/state/?job_id=7");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->status, 200);
  EXPECT_EQ(nlohmann::json::parse(state->body)["jobs"], nlohmann::json::array());
  auto one = client.Get(api + "/job/s123ABC");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 404);
  EXPECT_TRUE(nlohmann::json::parse(one->body, nullptr, false).is_discarded()) << one->body;
  auto listing = client.Get(api + "/jobs/");
  ASSERT_TRUE(listing);
  EXPECT_EQ(listing->status, 502);
  EXPECT_EQ(slurm.answered(), 0) << "a lie never reaches the upstream";

  // A submit (with its body) and a DELETE go through, on the same connection.
  const std::string body(5000, 'j');
  auto submit = client.Post(api + "/job/submit", body, "application/json");
  ASSERT_TRUE(submit);
  EXPECT_EQ(submit->status, 200);
  EXPECT_EQ(slurm.lastBody(), body);
  auto cancel = client.Delete(api + "/job/s123ABC");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 200);
  EXPECT_EQ(slurm.answered(), 2);

  proxy->stopLying();
  auto truth = client.Get(api + "/jobs/");
  ASSERT_TRUE(truth);
  EXPECT_EQ(truth->status, 200);
  EXPECT_EQ(proxy->counters().lies, 3);
  EXPECT_EQ(proxy->counters().lies_by_rule, std::vector<int>({1, 1, 1}));
  EXPECT_EQ(proxy->counters().accepted, 1) << "every request on one kept-alive connection";
}

TEST(FaultProxy, ALieToARequestWithABodySkipsTheBodyAndFramesTheNextRequest) {
  TruthfulSlurm slurm;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(slurm.port()), .http = true});
  ASSERT_NE(proxy, nullptr);
  proxy->lie({{.matches = [](std::string_view method,
                             std::string_view path) { return method == "POST" && path == "/x"; },
               .status = 503,
               .content_type = "text/plain",
               .body = "no"}},
             10min);
  httplib::Client client("127.0.0.1", proxy->port());
  client.set_keep_alive(true);
  client.set_read_timeout(10, 0);
  auto lied = client.Post("/x", std::string(70000, 'b'), "text/plain");  // several chunks
  ASSERT_TRUE(lied);
  EXPECT_EQ(lied->status, 503);
  EXPECT_EQ(lied->body, "no");
  auto next = client.Post("/y", "after", "text/plain");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(slurm.lastBody(), "after");
  EXPECT_EQ(slurm.answered(), 1);
}

TEST(FaultProxy, LiesEndWithTheirWindow) {
  TruthfulSlurm slurm;
  auto proxy = startProxy({.upstream = ProxyUpstream::tcp(slurm.port()), .http = true});
  ASSERT_NE(proxy, nullptr);
  proxy->lie(slurmReadLies(), 300ms);
  httplib::Client client("127.0.0.1", proxy->port());
  client.set_read_timeout(10, 0);
  int status = 0;
  waitUntil(
      [&] {
        auto res = client.Get("/slurm/v0.0.45/jobs/");
        status = res ? res->status : 0;
        return status == 200;
      },
      20s, 50ms);
  EXPECT_EQ(status, 200) << "the lies outlived their window";
}

}  // namespace
}  // namespace tuneplane::test
