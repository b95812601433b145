// See fault_proxy.h. One acceptor thread; one relay thread per connection, each polling its
// two sockets and an eventfd that faults write to wake it. Every socket is non-blocking, so a
// peer that stops reading (a SIGSTOPped client) can only fill a bounded queue, never block a
// thread.
#include "support/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

namespace tuneplane::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A relay thread looks at its flags at least this often, whatever poll waits for.
constexpr milliseconds kWakeEvery{200};
// How long a connect to the upstream may take (loopback: instant unless it is stuck).
constexpr milliseconds kConnectLimit{5000};
constexpr size_t kReadChunk = 64 * 1024;
// A request head longer than this turns the connection into a plain relay.
constexpr size_t kMaxHead = 64 * 1024;
// Past this many bytes waiting for one side, the other side is not read (backpressure).
constexpr size_t kMaxQueued = 4 * 1024 * 1024;

void closeSocket(int fd, bool reset) {
  if (fd < 0) return;
  if (reset) {
    linger abort{1, 0};  // close() then sends an RST
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  }
  ::close(fd);
}

void wake(int event_fd) {
  const uint64_t one = 1;
  (void)!::write(event_fd, &one, sizeof one);
}

void drain(int event_fd) {
  uint64_t value = 0;
  (void)!::read(event_fd, &value, sizeof value);
}

// A non-blocking connect bounded by kConnectLimit; -1 when it fails.
int connectUpstream(const ProxyUpstream& upstream) {
  sockaddr_storage address{};
  socklen_t length = 0;
  int fd = -1;
  if (!upstream.unix_socket.empty()) {
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    if (upstream.unix_socket.size() >= sizeof un.sun_path) return -1;
    std::memcpy(un.sun_path, upstream.unix_socket.c_str(), upstream.unix_socket.size() + 1);
    std::memcpy(&address, &un, sizeof un);
    length = sizeof un;
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  } else {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(static_cast<uint16_t>(upstream.port));
    if (::inet_pton(AF_INET, upstream.host.c_str(), &in.sin_addr) != 1) return -1;
    std::memcpy(&address, &in, sizeof in);
    length = sizeof in;
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  }
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), length) == 0) return fd;
  if (errno != EINPROGRESS && errno != EAGAIN) {
    ::close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  int error = 0;
  socklen_t size = sizeof error;
  if (::poll(&p, 1, static_cast<int>(kConnectLimit.count())) != 1 ||
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0 || error != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

const char* reasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

std::string httpAnswer(const HttpLie& lie) {
  return "HTTP/1.1 " + std::to_string(lie.status) + " " + reasonPhrase(lie.status) +
         "\r\nContent-Type: " + lie.content_type +
         "\r\nContent-Length: " + std::to_string(lie.body.size()) + "\r\n\r\n" + lie.body;
}

bool startsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  }
  return true;
}

// The head of one request: its method, its path (no query), its body's framing.
struct RequestHead {
  std::string method, path;
  size_t content_length = 0;
  bool chunked = false;
};

RequestHead parseHead(std::string_view head) {
  RequestHead out;
  const size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const size_t space = line.find(' ');
  out.method = std::string(line.substr(0, space));
  if (space != std::string_view::npos) {
    std::string_view target = line.substr(space + 1);
    target = target.substr(0, target.find(' '));
    out.path = std::string(target.substr(0, target.find('?')));
  }
  size_t at = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (at < head.size()) {
    const size_t end = std::min(head.find("\r\n", at), head.size());
    const std::string_view header = head.substr(at, end - at);
    if (startsWithNoCase(header, "content-length:")) {
      out.content_length = std::strtoull(std::string(header.substr(15)).c_str(), nullptr, 10);
    } else if (startsWithNoCase(header, "transfer-encoding:")) {
      out.chunked = true;  // any coding but identity means the body is not counted in bytes
    }
    at = end + 2;
  }
  return out;
}

}  // namespace

std::vector<HttpLie> slurmReadLies(const std::string& api) {
  const std::string state = api + "/jobs/state", listing = api + "/jobs", one = api + "/job/";
  auto is = [](std::string_view path, const std::string& route) {
    return path == route || path == route + "/";
  };
  return {
      {.matches = [=](std::string_view method,
                      std::string_view path) { return method == "GET" && is(path, state); },
       .status = 200,
       .content_type = "application/json",
       .body = R"({"jobs":[],"meta":{},"errors":[],"warnings":[]})"},
      {.matches = [=](std::string_view method,
                      std::string_view path) { return method == "GET" && is(path, listing); },
       .status = 502,
       .content_type = "text/html",
       .body = "<html><body><h1>502 Bad Gateway</h1></body></html>\n"},
      {.matches =
           [=](std::string_view method, std::string_view path) {
             return method == "GET" && path.starts_with(one) && path.size() > one.size() &&
                    !path.substr(one.size()).starts_with("submit");
           },
       .status = 404,
       .content_type = "text/html",
       .body = "<html><body><h1>404 Not Found</h1></body></html>\n"},
  };
}

class FaultProxy::Impl {
 public:
  explicit Impl(Options options) : options_(std::move(options)) {}
  ~Impl() {
    stopping_ = true;
    if (accept_wake_ >= 0) wake(accept_wake_);
    if (acceptor_.joinable()) acceptor_.join();
    std::list<std::unique_ptr<Connection>> connections;
    {
      std::lock_guard lock(mu_);
      connections.swap(connections_);
    }
    for (auto& c : connections) {
      wake(c->wake);
      if (c->thread.joinable()) c->thread.join();
      ::close(c->wake);
    }
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (accept_wake_ >= 0) ::close(accept_wake_);
  }

  bool listen(std::string& error) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    accept_wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (listen_fd_ < 0 || accept_wake_ < 0) {
      error = std::string("socket: ") + std::strerror(errno);
      return false;
    }
    const int yes = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listen_fd_, 128) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      error = std::string("listen on 127.0.0.1: ") + std::strerror(errno);
      return false;
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { acceptLoop(); });
    return true;
  }

  int port() const { return port_; }

  int cut(bool reset) {
    std::lock_guard lock(mu_);
    int n = 0;
    for (auto& c : connections_) {
      if (c->done) continue;
      c->reset = reset;
      c->cut = true;
      wake(c->wake);
      ++n;
    }
    counters_.cut += n;
    return n;
  }

  void freeze(milliseconds hold) {
    std::lock_guard lock(mu_);
    frozen_until_ = Clock::now() + hold;
    wakeAllLocked();
  }

  void thaw() {
    std::lock_guard lock(mu_);
    frozen_until_ = {};
    for (auto& c : connections_) c->frozen_until = {};
    wakeAllLocked();
  }

  void delay(milliseconds per_chunk, milliseconds window) {
    std::lock_guard lock(mu_);
    delay_ = per_chunk;
    delay_until_ = Clock::now() + window;
    wakeAllLocked();
  }

  void freezeAfter(std::string arm, std::string then, milliseconds hold,
                   std::function<void()> on_strike) {
    std::lock_guard lock(mu_);
    trigger_ = Trigger{std::move(arm), std::move(then), hold, std::move(on_strike)};
    trigger_armed_ = true;
    trigger_taken_ = false;
    trigger_struck_ = false;
  }

  bool struck() const {
    std::lock_guard lock(mu_);
    return trigger_struck_;
  }

  void disarm() {
    std::lock_guard lock(mu_);
    trigger_armed_ = false;
  }

  void lie(std::vector<HttpLie> lies, milliseconds window) {
    std::lock_guard lock(mu_);
    counters_.lies_by_rule.assign(lies.size(), 0);
    lies_ = std::make_shared<const std::vector<HttpLie>>(std::move(lies));
    lie_until_ = Clock::now() + window;
  }

  void stopLying() {
    std::lock_guard lock(mu_);
    lie_until_ = {};
  }

  Counters counters() const {
    std::lock_guard lock(mu_);
    Counters out = counters_;
    out.open = 0;
    for (const auto& c : connections_) out.open += c->done ? 0 : 1;
    return out;
  }

 private:
  struct Connection {
    int client = -1;
    int wake = -1;
    std::atomic<bool> cut{false}, reset{false}, done{false};
    Clock::time_point frozen_until{};  // guarded by mu_
    std::thread thread;
  };
  struct Trigger {
    std::string arm, then;
    milliseconds hold{0};
    std::function<void()> on_strike;
  };
  // Bytes read from one side, waiting to be written to the other.
  struct Chunk {
    Clock::time_point release;
    std::string data;
    size_t offset = 0;
  };
  struct Direction {
    int from = -1, to = -1;
    std::deque<Chunk> queue;
    size_t queued = 0;
    bool eof = false;        // `from` closed its sending side
    bool shut_down = false;  // …and that was passed on to `to`
    void push(Clock::time_point release, std::string data) {
      if (data.empty()) return;
      queued += data.size();
      queue.push_back({release, std::move(data), 0});
    }
    bool ready(Clock::time_point now) const {
      return !queue.empty() && queue.front().release <= now;
    }
  };
  // A connection's HTTP framing (Options::http): where the next request head starts.
  struct Framing {
    std::string head;
    size_t body_left = 0;
    bool skipping = false;  // the current request was lied to: its body is not relayed
    bool raw = false;       // lost track (chunked body, huge head): relay as is
  };

  void wakeAllLocked() {
    for (auto& c : connections_) wake(c->wake);
  }

  void acceptLoop() {
    while (!stopping_) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {accept_wake_, POLLIN, 0}};
      if (::poll(fds, 2, static_cast<int>(kWakeEvery.count())) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) drain(accept_wake_);
      reapFinished();
      if ((fds[0].revents & POLLIN) == 0) continue;
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (client < 0) continue;
      auto connection = std::make_unique<Connection>();
      connection->client = client;
      connection->wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      Connection* c = connection.get();
      std::lock_guard lock(mu_);
      ++counters_.accepted;
      connections_.push_back(std::move(connection));
      c->thread = std::thread([this, c] { relay(*c); });
    }
  }

  void reapFinished() {
    std::list<std::unique_ptr<Connection>> finished;
    {
      std::lock_guard lock(mu_);
      for (auto it = connections_.begin(); it != connections_.end();) {
        if ((*it)->done) {
          finished.push_back(std::move(*it));
          it = connections_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& c : finished) {
      if (c->thread.joinable()) c->thread.join();
      ::close(c->wake);
    }
  }

  // What arrived from the client: framed (HTTP mode: lies answered) and looked at by the
  // trigger. Appends what goes upstream to `up`, what goes back to the client to `back`.
  void fromClient(std::string data, Framing& framing, int& stage, std::string& up,
                  std::string& back) {
    {
      std::lock_guard lock(mu_);
      if (stage == 0 && trigger_armed_ && !trigger_taken_ &&
          data.find(trigger_.arm) != std::string::npos) {
        trigger_taken_ = true;
        stage = trigger_.then.empty() ? 2 : 1;
      } else if (stage == 1 && data.starts_with(trigger_.then)) {
        stage = 2;
      }
    }
    if (!options_.http) {
      up += data;
      return;
    }
    size_t at = 0;
    while (at < data.size()) {
      if (framing.raw) {
        up.append(data, at);
        return;
      }
      if (framing.body_left > 0) {
        const size_t n = std::min(framing.body_left, data.size() - at);
        if (!framing.skipping) up.append(data, at, n);
        framing.body_left -= n;
        at += n;
        continue;
      }
      framing.head.append(data, at);
      at = data.size();
      const size_t end = framing.head.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (framing.head.size() > kMaxHead) {
          framing.raw = true;
          up += framing.head;
          framing.head.clear();
        }
        return;
      }
      const std::string head = framing.head.substr(0, end + 4);
      data = framing.head.substr(end + 4);
      at = 0;
      framing.head.clear();
      const RequestHead request = parseHead(head);
      if (request.chunked) {
        framing.raw = true;
        up += head;
        continue;
      }
      framing.body_left = request.content_length;
      const HttpLie* lie = nullptr;
      size_t rule_index = 0;
      std::shared_ptr<const std::vector<HttpLie>> lies;
      {
        std::lock_guard lock(mu_);
        if (Clock::now() < lie_until_) lies = lies_;
      }
      if (lies) {
        for (size_t i = 0; i < lies->size() && lie == nullptr; ++i) {
          const HttpLie& rule = (*lies)[i];
          if (rule.matches && rule.matches(request.method, request.path)) {
            lie = &rule;
            rule_index = i;
          }
        }
      }
      framing.skipping = lie != nullptr;
      if (lie != nullptr) {
        back += httpAnswer(*lie);
        std::lock_guard lock(mu_);
        ++counters_.lies;
        // The rules may have been replaced meanwhile: count only against the ones in force.
        if (lies == lies_ && rule_index < counters_.lies_by_rule.size())
          ++counters_.lies_by_rule[rule_index];
      } else {
        up += head;
      }
    }
  }

  // Reads what `from` has (one chunk); false on an error that ends the connection.
  static bool readSide(int fd, std::string& into, bool& eof) {
    char buffer[kReadChunk];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.assign(buffer, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) {
      eof = true;
      return true;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  }

  // Writes what is due; false on an error that ends the connection.
  static bool writeSide(Direction& d, Clock::time_point now) {
    while (d.ready(now)) {
      Chunk& chunk = d.queue.front();
      const ssize_t n = ::send(d.to, chunk.data.data() + chunk.offset,
                               chunk.data.size() - chunk.offset, MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      chunk.offset += static_cast<size_t>(n);
      d.queued -= static_cast<size_t>(n);
      if (chunk.offset < chunk.data.size()) return true;  // the socket is full: later
      d.queue.pop_front();
    }
    return true;
  }

  void relay(Connection& c) {
    const int upstream = connectUpstream(options_.upstream);
    if (upstream < 0) {
      {
        // Counted before the client sees its connection end: whoever saw the end may read it.
        std::lock_guard lock(mu_);
        ++counters_.upstream_failed;
      }
      closeSocket(c.client, true);
      std::lock_guard lock(mu_);
      c.done = true;
      return;
    }
    Direction up, down;
    up.from = down.to = c.client;
    up.to = down.from = upstream;
    Framing framing;
    int stage = 0;  // the trigger: 0 not here, 1 armed, 2 strikes once `up` is written
    while (!stopping_ && !c.cut) {
      auto now = Clock::now();
      bool frozen = false;
      Clock::time_point delay_until{}, wake_at = now + kWakeEvery;
      milliseconds delay{0};
      {
        std::lock_guard lock(mu_);
        const Clock::time_point until = std::max(frozen_until_, c.frozen_until);
        frozen = now < until;
        if (frozen) wake_at = std::min(wake_at, until);
        delay = delay_;
        delay_until = delay_until_;
      }
      pollfd fds[3] = {{c.wake, POLLIN, 0}, {c.client, 0, 0}, {upstream, 0, 0}};
      if (!frozen) {
        if (!up.eof && up.queued < kMaxQueued) fds[1].events |= POLLIN;
        if (!down.eof && down.queued < kMaxQueued) fds[2].events |= POLLIN;
        if (up.ready(now)) fds[2].events |= POLLOUT;
        if (down.ready(now)) fds[1].events |= POLLOUT;
        for (const Direction* d : {&up, &down}) {
          if (!d->queue.empty() && d->queue.front().release > now)
            wake_at = std::min(wake_at, d->queue.front().release);
        }
      }
      // A side asked for nothing is left out of the poll: its POLLHUP would wake it at once.
      for (pollfd* side : {&fds[1], &fds[2]}) {
        if (side->events == 0) side->fd = -1;
      }
      const auto wait = std::chrono::duration_cast<milliseconds>(wake_at - now).count();
      if (::poll(fds, 3, static_cast<int>(std::max<int64_t>(wait, 0) + 1)) < 0 && errno != EINTR)
        break;
      if (fds[0].revents != 0) drain(c.wake);
      if (c.cut || stopping_ || frozen) continue;
      now = Clock::now();
      const Clock::time_point release = now < delay_until ? now + delay : now;
      bool failed = false;
      if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        std::string data, to_up, back;
        failed = !readSide(c.client, data, up.eof);
        if (!data.empty()) fromClient(std::move(data), framing, stage, to_up, back);
        up.push(release, std::move(to_up));
        down.push(now, std::move(back));
      }
      if (!failed && (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        std::string data;
        failed = !readSide(upstream, data, down.eof);
        down.push(release, std::move(data));
      }
      if (failed || !writeSide(up, now) || !writeSide(down, now)) break;
      for (Direction* d : {&up, &down}) {
        if (d->eof && d->queue.empty() && !d->shut_down) {
          ::shutdown(d->to, SHUT_WR);
          d->shut_down = true;
        }
      }
      if (up.shut_down && down.shut_down) break;
      if (stage == 2 && up.queue.empty()) {
        stage = 3;
        std::function<void()> on_strike;
        {
          std::lock_guard lock(mu_);
          if (trigger_armed_) {  // not disarmed meanwhile
            c.frozen_until = Clock::now() + trigger_.hold;
            trigger_struck_ = true;
            trigger_armed_ = false;
            ++counters_.frozen_after;
            on_strike = trigger_.on_strike;
          }
        }
        if (on_strike) on_strike();
      }
    }
    {
      std::lock_guard lock(mu_);
      // A trigger this connection took and never struck is free for the next one.
      if (stage == 1 || stage == 2) trigger_taken_ = false;
    }
    const bool reset = c.reset;
    closeSocket(c.client, reset);
    closeSocket(upstream, reset);
    c.done = true;
  }

  const Options options_;
  int listen_fd_ = -1;
  int accept_wake_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;

  mutable std::mutex mu_;
  std::list<std::unique_ptr<Connection>> connections_;
  Counters counters_;
  Clock::time_point frozen_until_{};
  milliseconds delay_{0};
  Clock::time_point delay_until_{};
  Trigger trigger_;
  bool trigger_armed_ = false, trigger_taken_ = false, trigger_struck_ = false;
  std::shared_ptr<const std::vector<HttpLie>> lies_;
  Clock::time_point lie_until_{};
};

FaultProxy::FaultProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FaultProxy::~FaultProxy() = default;

std::unique_ptr<FaultProxy> FaultProxy::start(Options options, std::string& error) {
  auto impl = std::make_unique<Impl>(std::move(options));
  if (!impl->listen(error)) return nullptr;
  return std::unique_ptr<FaultProxy>(new FaultProxy(std::move(impl)));
}

int FaultProxy::port() const {
  return impl_->port();
}
std::string FaultProxy::address() const {
  return "127.0.0.1:" + std::to_string(impl_->port());
}
int FaultProxy::cut(bool reset) {
  return impl_->cut(reset);
}
void FaultProxy::freeze(std::chrono::milliseconds hold) {
  impl_->freeze(hold);
}
void FaultProxy::thaw() {
  impl_->thaw();
}
void FaultProxy::delay(std::chrono::milliseconds per_chunk, std::chrono::milliseconds window) {
  impl_->delay(per_chunk, window);
}
void FaultProxy::freezeAfter(std::string arm, std::string then, std::chrono::milliseconds hold,
                             std::function<void()> on_strike) {
  impl_->freezeAfter(std::move(arm), std::move(then), hold, std::move(on_strike));
}
bool FaultProxy::struck() const {
  return impl_->struck();
}
void FaultProxy::disarm() {
  impl_->disarm();
}
void FaultProxy::lie(std::vector<HttpLie> lies, std::chrono::milliseconds window) {
  impl_->lie(std::move(lies), window);
}
void FaultProxy::stopLying() {
  impl_->stopLying();
}
FaultProxy::Counters FaultProxy::counters() const {
  return impl_->counters();
}

}  // namespace tuneplane::test
