// See replica_set.h.
#include "campaign/replica_set.h"

#include <signal.h>

#include <filesystem>
#include <thread>

#include "store/pg_connection.h"

namespace tuneplane::campaign {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A serve that exits as it starts (its store busy: a writer frozen holding the writers' lock
// past its lock timeout) is started again this often, as systemd's Restart=on-failure
// (RestartSec=5 in the packaged unit; shorter here) would.
constexpr int kStartTries = 20;
constexpr auto kRestartPause = 1s;

// The text of the writers' lock key as a PostgreSQL Bind carries it (values travel as text,
// store/pg_connection.h): the proxy strikes right after a connection asked for the lock,
// i.e. inside a write transaction that is about to hold it.
std::string writersLockNeedle() {
  return std::to_string(store::kWriteLockKey);
}

}  // namespace

std::unique_ptr<ReplicaSet> ReplicaSet::single(const std::string& site_file, const std::string& db,
                                               const std::string& dir,
                                               std::vector<std::string> env) {
  auto set = std::unique_ptr<ReplicaSet>(new ReplicaSet(site_file, std::move(env), false));
  set->members_.resize(1);
  set->members_[0].dir = dir;
  set->members_[0].db = db;
  if (!set->start(0)) return nullptr;
  return set;
}

std::unique_ptr<ReplicaSet> ReplicaSet::replicas(int count, const std::string& site_file,
                                                 test::PgCluster& pg, const std::string& db_name,
                                                 const std::string& dir,
                                                 std::vector<std::string> env, std::string& error) {
  auto set = std::unique_ptr<ReplicaSet>(new ReplicaSet(site_file, std::move(env), true));
  set->members_.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < set->members_.size(); ++i) {
    Member& m = set->members_[i];
    m.dir = dir + "/replica-" + std::to_string(i);
    fs::create_directories(m.dir);
    m.proxy = test::FaultProxy::start(
        {.upstream = test::ProxyUpstream::unixSocket(pg.socketPath()), .http = false}, error);
    if (!m.proxy) return nullptr;
    m.db = pg.uriThrough(m.proxy->address(), db_name);
    if (!set->start(i)) {
      error = set->name(i) + " did not start";
      return nullptr;
    }
  }
  if (set->waitLeader(-1, kTakeoverLimit) < 0) {
    error = "no replica took the lease";
    return nullptr;
  }
  return set;
}

ReplicaSet::~ReplicaSet() {
  for (Member& m : members_) {
    if (m.serve && m.stopped) m.serve->process().signal(SIGCONT);
    m.serve.reset();
  }
  members_.clear();  // the proxies after their serves
}

std::string ReplicaSet::name(size_t i) const {
  return replicated_ ? "replica " + std::to_string(i) : std::string("serve");
}

bool ReplicaSet::start(size_t i) {
  Member& m = members_[i];
  for (int tries = 1; tries <= kStartTries; ++tries) {
    std::optional<int> exited;
    // Replicas: a start that exits at once is tried again, as systemd would; the last try,
    // and the single serve's only one, report their failure.
    const bool last = !replicated_ || tries == kStartTries;
    m.serve =
        test::ServeProcess::start(site_file_, m.db, m.dir, m.port, env_, last ? nullptr : &exited);
    if (m.serve) {
      m.port = m.serve->port();
      m.stopped = false;
      return true;
    }
    if (!exited) return false;  // not ready in time: reported
    ++starts_refused_;
    // systemd's RestartSec: real time passes before the next start of the serve process (the
    // frozen writer that made it exit holds its lock meanwhile; nothing says when it lets go).
    std::this_thread::sleep_for(kRestartPause);
  }
  return false;
}

std::vector<size_t> ReplicaSet::askOrder() {
  std::vector<size_t> order;
  const size_t n = members_.size();
  const size_t first = next_++ % n;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (first + k) % n;
    if (members_[i].serve && !members_[i].stopped) order.push_back(i);
  }
  return order;
}

std::unique_ptr<httplib::Client> ReplicaSet::api(size_t i) const {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", members_[i].port);
  client->set_connection_timeout(2, 0);
  // A replica's request may wait for a writer a fault froze (up to 18 s) and the store's lock
  // timeout after it.
  client->set_read_timeout(replicated_ ? 40 : 15, 0);
  return client;
}

nlohmann::json ReplicaSet::getFromAny(const std::string& path, const std::string& token) {
  const httplib::Headers auth = {{"Authorization", "Bearer " + token}};
  for (const size_t i : askOrder()) {
    auto res = api(i)->Get(path, auth);
    if (res && res->status == 200) return nlohmann::json::parse(res->body, nullptr, false);
    if (res && res->status == 404) break;
  }
  return nlohmann::json::value_t::discarded;
}

std::optional<httplib::Response> ReplicaSet::postToAny(
    const std::string& path, const std::string& body, const std::string& content_type,
    const std::string& token, int& retried, const std::function<void(const std::string&)>& note) {
  const httplib::Headers auth = {{"Authorization", "Bearer " + token}};
  std::optional<httplib::Response> last;
  test::waitUntil(
      [&] {
        const std::vector<size_t> order = askOrder();
        if (order.empty()) return false;
        const size_t i = order.front();
        auto res = api(i)->Post(path, auth, body, content_type);
        last = res ? std::optional<httplib::Response>(*res) : std::nullopt;
        if ((res && res->status < 500) || !replicated_) return true;
        ++retried;
        note("  (" + path + " via " + name(i) + ": " +
             (res ? std::to_string(res->status) + " " + res->body : std::string("no answer")) +
             "; sent again)");
        return false;
      },
      kRetryLimit, 500ms);
  return last;
}

int ReplicaSet::leader(int besides) const {
  for (size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    if (static_cast<int>(i) == besides || !m.serve || m.stopped || m.cut_off) continue;
    if (test::metricValue(m.serve->url(), "tuneplane_leader").value_or(0) == 1)
      return static_cast<int>(i);
  }
  return -1;
}

int ReplicaSet::waitLeader(int besides, std::chrono::milliseconds limit) const {
  int found = -1;
  test::waitUntil(
      [&] {
        found = leader(besides);
        return found >= 0;
      },
      limit, 100ms);
  return found;
}

size_t ReplicaSet::target(uint32_t pick) const {
  const int lead = leader();
  if (pick % 2 == 0 && lead >= 0) return static_cast<size_t>(lead);
  return pick % members_.size();
}

bool ReplicaSet::crashAndRestart(size_t i, std::chrono::milliseconds down) {
  members_[i].serve->crash();
  members_[i].serve.reset();
  // The fault's window: the crashed serve process stays down this long in real time (drawn
  // by the schedule) while the others, the clients and the simulator go on without it.
  std::this_thread::sleep_for(down);
  return start(i);
}

void ReplicaSet::resume(size_t i) {
  members_[i].serve->process().signal(SIGCONT);
  members_[i].stopped = false;
}

void ReplicaSet::cutOff(size_t i, bool off) {
  Member& m = members_[i];
  if (off) {
    m.proxy->freeze(std::chrono::duration_cast<std::chrono::milliseconds>(kTakeoverLimit + 10s));
  } else {
    m.proxy->thaw();
  }
  m.cut_off = off;
}

ReplicaStrike ReplicaSet::stopTheLeaderInsideItsTransaction() {
  ReplicaStrike out;
  const int lead = waitLeader(-1, kTakeoverLimit);
  if (lead < 0) {
    out.detail = "no leader";
    return out;
  }
  Member& m = members_[lead];
  const pid_t pid = m.serve->process().pid();
  m.proxy->freezeAfter(writersLockNeedle(), "", 0ms, [pid] { ::kill(pid, SIGSTOP); });
  test::waitUntil([&] { return m.proxy->struck(); }, kWriteLimit, 5ms);
  m.proxy->disarm();
  const bool inside = m.proxy->struck();
  if (!inside) m.serve->process().signal(SIGSTOP);  // it wrote nothing: anywhere
  m.stopped = true;
  out.struck = true;
  out.detail =
      name(lead) + (inside ? " holding the writers' lock" : " (it wrote nothing: anywhere)");
  const int next = waitLeader(lead, kTakeoverLimit);
  resume(lead);
  if (next < 0) {
    out.violation = "no replica took the lease over within " +
                    std::to_string(kTakeoverLimit.count()) + " s while the leader (" + name(lead) +
                    ") was stopped";
    return out;
  }
  ++out.takeovers;
  out.detail += "; " + name(next) + " took over, then " + name(lead) + " was resumed";
  return out;
}

ReplicaStrike ReplicaSet::loseAndRetakeTheLease() {
  ReplicaStrike out;
  const int first = waitLeader(-1, kTakeoverLimit);
  if (first < 0) {
    out.detail = "no leader";
    return out;
  }
  out.struck = true;
  out.detail = name(first) + " cut off";
  cutOff(first, true);
  const int second = waitLeader(first, kTakeoverLimit);
  cutOff(first, false);
  if (second < 0) {
    out.violation = "no replica took the lease over within " +
                    std::to_string(kTakeoverLimit.count()) + " s while the leader (" + name(first) +
                    ") was cut off from the database";
    return out;
  }
  ++out.takeovers;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (static_cast<int>(i) != first) cutOff(i, true);
  }
  const bool retaken = test::waitUntil([&] { return leader() == first; }, kTakeoverLimit, 100ms);
  for (size_t i = 0; i < members_.size(); ++i) {
    if (static_cast<int>(i) != first) cutOff(i, false);
  }
  if (!retaken) {
    out.violation = name(first) + " did not take the lease back within " +
                    std::to_string(kTakeoverLimit.count()) +
                    " s while every other replica was cut off";
    return out;
  }
  ++out.takeovers;
  out.detail += "; " + name(second) + " took over, then " + name(first) + " took it back";
  return out;
}

ReplicaStrike ReplicaSet::cutConnections(uint32_t pick, bool reset) {
  ReplicaStrike out;
  const size_t i = target(pick);
  const int n = members_[i].proxy->cut(reset);
  out.struck = n > 0;
  out.detail = n > 0 ? name(i) + ", " + std::to_string(n) + " connections"
                     : "no open connection of " + name(i);
  return out;
}

ReplicaStrike ReplicaSet::freezeAWriter(uint32_t pick, std::chrono::milliseconds hold) {
  ReplicaStrike out;
  const size_t i = target(pick);
  test::FaultProxy& proxy = *members_[i].proxy;
  proxy.freezeAfter(writersLockNeedle(), "", hold);
  out.struck = test::waitUntil([&] { return proxy.struck(); }, kWriteLimit, 20ms);
  if (!out.struck) {
    proxy.disarm();
    out.struck = proxy.struck();  // in the moment between
  }
  out.detail = out.struck ? name(i) + " for " + std::to_string(hold.count()) + " ms"
                          : name(i) + " wrote nothing";
  return out;
}

ReplicaStrike ReplicaSet::delayTraffic(uint32_t pick, std::chrono::milliseconds per_chunk,
                                       std::chrono::milliseconds window) {
  ReplicaStrike out;
  const size_t i = target(pick);
  members_[i].proxy->delay(per_chunk, window);
  out.struck = true;
  out.detail = name(i) + ", " + std::to_string(per_chunk.count()) + " ms a chunk for " +
               std::to_string(window.count()) + " ms";
  return out;
}

void ReplicaSet::clear() {
  for (size_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    if (m.proxy) {
      m.proxy->disarm();
      m.proxy->thaw();
      m.proxy->delay(0ms, 0ms);
      m.cut_off = false;
    }
    if (m.serve && m.stopped) resume(i);
  }
}

std::vector<std::string> ReplicaSet::stopAll() {
  std::vector<std::string> unclean;
  for (size_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    if (!m.serve) continue;
    if (m.serve->stop() != 0) unclean.push_back(name(i) + " did not stop cleanly on SIGTERM");
    m.serve.reset();
  }
  return unclean;
}

}  // namespace tuneplane::campaign
