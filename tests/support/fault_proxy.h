// A fault-injecting TCP proxy for tests (issue 37): it listens on 127.0.0.1 (port 0: a free
// one) and relays each connection it accepts to one upstream — a loopback TCP address, or a
// Unix socket (a test PostgreSQL's) — byte for byte, until a test makes it misbehave:
//
//   cut(reset)        every open connection closed at once, both ends (a TCP RST with
//                     `reset`, as from a crashed middlebox), the proxy still accepting;
//   freeze(hold)      nothing relayed either way, on open connections and new ones, for
//                     `hold` or until thaw() — a partition that drops nothing (the peers'
//                     bytes wait in the kernel), so each side sees a peer that went silent;
//   delay(d, window)  every chunk read held `d` before it is relayed, for `window`;
//   freezeAfter(...)  one connection frozen at a chosen point of its conversation: armed by
//                     a client chunk holding `arm`, it freezes right after it has relayed a
//                     later client chunk beginning with `then` (for PostgreSQL: "BEGIN" as a
//                     simple query, then the next Bind — the statement inside the
//                     transaction, e.g. the writers' lock — so a writer stalls *inside* its
//                     transaction), and calls `on_strike` (e.g. to SIGSTOP the client);
//   lie(lies, window) HTTP mode: a request the rules match is answered by the proxy itself
//                     (not relayed), e.g. slurmrestd's reads answered as a misrouted proxy
//                     would (slurmReadLies()); the rest is relayed as it is.
//
// HTTP mode follows requests' framing on each connection (request line, Content-Length);
// a chunked request body, or a request head over 64 KiB, turns that connection to a plain
// relay (it is never lied to again). Requests are expected one at a time per connection, as
// libcurl and cpp-httplib send them (no pipelining).
//
// Bounded: non-blocking sockets and poll, each connection on a thread of its own that also
// wakes at least every 200 ms; whatever a fault holds is held for a bounded time or until the
// proxy ends. The destructor closes every connection and joins every thread. Thread-safety:
// every method may be called from any thread; `on_strike` runs on a relay thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::test {

struct ProxyUpstream {
  std::string host = "127.0.0.1";  // a TCP upstream: host (a numeric IPv4 address) and port…
  int port = 0;
  std::string unix_socket;  // …or, when set, a Unix socket's path

  static ProxyUpstream tcp(int port, std::string host = "127.0.0.1") {
    return {.host = std::move(host), .port = port, .unix_socket = ""};
  }
  static ProxyUpstream unixSocket(std::string path) {
    return {.host = "", .port = 0, .unix_socket = std::move(path)};
  }
};

// One rule of lie(): a request whose method and path (the target without its query) it
// matches is answered with `status` and `body` instead of being relayed.
struct HttpLie {
  std::function<bool(std::string_view method, std::string_view path)> matches;
  int status = 404;
  std::string content_type = "text/plain";
  std::string body;
};

// slurmrestd's reads as issue 37 met them behind a misrouted proxy (`api`: "/slurm/v0.0.45"):
// GET {api}/jobs/state/ answers 200 with no jobs, GET {api}/job/{id} a bare 404 with no Slurm
// JSON, GET {api}/jobs/ a 502. Submits, DELETEs and everything else go through.
std::vector<HttpLie> slurmReadLies(const std::string& api = "/slurm/v0.0.45");

class FaultProxy {
 public:
  struct Options {
    ProxyUpstream upstream;
    bool http = false;  // follow HTTP requests' framing, so that lie() can answer them
  };
  // What the proxy has done so far.
  struct Counters {
    int accepted = 0;               // connections accepted
    int open = 0;                   // connections relaying now
    int cut = 0;                    // connections cut()
    int frozen_after = 0;           // connections freezeAfter() struck
    int lies = 0;                   // requests answered by a lie
    std::vector<int> lies_by_rule;  // …by each rule of the last lie(), in its order
    int upstream_failed = 0;        // connections closed because the upstream refused them
  };

  // Listens and starts accepting; nullptr (and `error`) when it cannot listen.
  static std::unique_ptr<FaultProxy> start(Options options, std::string& error);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const;
  // "127.0.0.1:PORT".
  std::string address() const;

  // Closes every open connection, both ends; the count.
  int cut(bool reset);
  void freeze(std::chrono::milliseconds hold);
  // Ends freeze() and every connection freezeAfter() froze.
  void thaw();
  void delay(std::chrono::milliseconds per_chunk, std::chrono::milliseconds window);
  // One-shot: arms the next connection whose client sends a chunk holding `arm`; that one
  // freezes for `hold` once it has relayed a later client chunk that begins with `then`
  // (empty: the arming chunk itself), then `on_strike` runs. A new call replaces an armed
  // trigger that has not struck.
  void freezeAfter(std::string arm, std::string then, std::chrono::milliseconds hold,
                   std::function<void()> on_strike = {});
  // Whether the last freezeAfter() has struck.
  bool struck() const;
  // An armed freezeAfter() that has not struck never will, not even on a connection that is
  // about to (what it froze stays frozen until its hold ends or thaw()).
  void disarm();
  // HTTP mode only: for `window`, requests that a rule of `lies` matches are answered by it.
  void lie(std::vector<HttpLie> lies, std::chrono::milliseconds window);
  void stopLying();

  Counters counters() const;

 private:
  class Impl;
  explicit FaultProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tuneplane::test
