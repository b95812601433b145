// The `tuneplane serve` processes of one campaign run (campaign_run.h) and the faults that
// strike them rather than Slurm: one serve on SQLite, or three replicas on one PostgreSQL
// database, each reaching it through a fault proxy of its own (support/fault_proxy.h), so that
// a fault can cut, freeze or delay one replica's database alone. It knows which replica leads
// (tuneplane_leader in /metrics), which are down, SIGSTOPped or cut off, and asks the live
// ones in turn. Every wait is bounded. Thread-safety: one owner (the run's thread); a proxy's
// strike callback (SIGSTOP) runs on the proxy's thread and touches only the process.
#pragma once

#include <httplib.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fault_proxy.h"
#include "support/pg_cluster.h"
#include "support/serve_harness.h"

namespace tuneplane::campaign {

// What a fault on the replicas did: whether it struck (with what to print), the takeovers it
// waited for, and the promise it found broken (a takeover that never came), if any.
struct ReplicaStrike {
  bool struck = false;
  std::string detail;  // what it did, or why it did not strike
  int takeovers = 0;
  std::optional<std::string> violation;
};

class ReplicaSet {
 public:
  // How long a takeover may take, at most: a lease (2 s), a round of the take, the stale
  // holder's sessions ended, on a loaded machine (a bound on a hang, not a measurement).
  static constexpr std::chrono::seconds kTakeoverLimit{45};
  // How long a fault that waits for a replica's next write waits.
  static constexpr std::chrono::seconds kWriteLimit{5};
  // How long a request that meets a store held by a fault is sent again to other replicas.
  static constexpr std::chrono::seconds kRetryLimit{60};

  // One serve on the SQLite file `db`, its output in `dir`. nullptr when it does not start.
  static std::unique_ptr<ReplicaSet> single(const std::string& site_file, const std::string& db,
                                            const std::string& dir, std::vector<std::string> env);
  // `count` replicas on the database `db_name` of `pg`, replica i's output in `dir`/replica-i,
  // each through a proxy of its own; once one leads. nullptr (and `error`) otherwise.
  static std::unique_ptr<ReplicaSet> replicas(int count, const std::string& site_file,
                                              test::PgCluster& pg, const std::string& db_name,
                                              const std::string& dir, std::vector<std::string> env,
                                              std::string& error);
  ~ReplicaSet();  // SIGCONT what is stopped, then every serve and proxy ends
  ReplicaSet(const ReplicaSet&) = delete;
  ReplicaSet& operator=(const ReplicaSet&) = delete;

  bool replicated() const { return replicated_; }
  size_t size() const { return members_.size(); }
  std::string name(size_t i) const;  // "replica 1", or "serve"
  const std::string& dir(size_t i) const { return members_[i].dir; }
  int port(size_t i) const { return members_[i].port; }

  // The replicas to ask, the next one first in turn: up, not SIGSTOPped.
  std::vector<size_t> askOrder();
  // GET `path` (with the bearer `token`) from the first replica that answers it 200;
  // discarded when none does (a 404 is every replica's answer: one database).
  nlohmann::json getFromAny(const std::string& path, const std::string& token);
  // POST to the replicas in turn until one answers something else than a 5xx (its store held
  // by a fault) or nothing, for kRetryLimit at most; the last answer (nullopt: none came).
  // Each one sent again adds to `retried` and is told to `note`. The single serve is asked
  // once.
  std::optional<httplib::Response> postToAny(const std::string& path, const std::string& body,
                                             const std::string& content_type,
                                             const std::string& token, int& retried,
                                             const std::function<void(const std::string&)>& note);

  // The replica that leads now, leaving out `besides`; -1 when none does. Stopped and
  // cut-off replicas are not asked (their /metrics may not answer).
  int leader(int besides = -1) const;
  int waitLeader(int besides, std::chrono::milliseconds limit) const;
  // A targeted fault's replica: the leader for an even pick (it writes the most), else the
  // pick's.
  size_t target(uint32_t pick) const;

  // SIGKILL replica i, then (after `down`) start it again on its address and its proxy;
  // false when it did not start.
  bool crashAndRestart(size_t i, std::chrono::milliseconds down);

  // --- Issue 37's faults (replicas only).
  // The leader SIGSTOPped by its proxy the moment it asked for the writers' lock (anywhere if
  // it writes nothing for kWriteLimit), SIGCONTed once another replica leads.
  ReplicaStrike stopTheLeaderInsideItsTransaction();
  // The leader cut off from the database until another leads; then every other replica cut
  // off until the first leads again, at a newer epoch.
  ReplicaStrike loseAndRetakeTheLease();
  // Every open database connection of the pick's replica closed (an RST with `reset`).
  ReplicaStrike cutConnections(uint32_t pick, bool reset);
  // The pick's replica's next write transaction frozen right after it asked for the writers'
  // lock, for `hold` (it thaws by itself); not struck if it writes nothing for kWriteLimit.
  ReplicaStrike freezeAWriter(uint32_t pick, std::chrono::milliseconds hold);
  // Every chunk the pick's replica's proxy relays held `per_chunk`, for `window`.
  ReplicaStrike delayTraffic(uint32_t pick, std::chrono::milliseconds per_chunk,
                             std::chrono::milliseconds window);

  // The faults stop: triggers disarmed, proxies thawed and undelayed, stopped ones resumed.
  void clear();
  // SIGTERM every serve; one line for each that did not stop cleanly (exit 0).
  std::vector<std::string> stopAll();
  // Starts of a replica that exited at once and were tried again (as systemd would): its
  // store was busy as it started.
  int startsRefused() const { return starts_refused_; }

 private:
  struct Member {
    std::string dir, db;
    std::unique_ptr<test::FaultProxy> proxy;    // replicas only
    std::unique_ptr<test::ServeProcess> serve;  // null while it is down
    int port = 0;
    bool stopped = false;  // SIGSTOPped: asked nothing until SIGCONT
    bool cut_off = false;  // its proxy frozen by a fault: its /metrics may hang
  };
  ReplicaSet(std::string site_file, std::vector<std::string> env, bool replicated)
      : site_file_(std::move(site_file)), env_(std::move(env)), replicated_(replicated) {}

  bool start(size_t i);
  std::unique_ptr<httplib::Client> api(size_t i) const;
  void resume(size_t i);
  void cutOff(size_t i, bool off);

  std::string site_file_;
  std::vector<std::string> env_;
  bool replicated_;
  std::vector<Member> members_;
  size_t next_ = 0;  // the replica asked first next time
  int starts_refused_ = 0;
};

}  // namespace tuneplane::campaign
