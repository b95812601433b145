// Internals of the Simulator: its lifetime (simulator.cc), the job table and its state machine
// (job_table.cc), the faults (faults.cc), the REST routes (http_routes.cc and the route files
// it dispatches to) and the unix-socket front (unix_bridge.h). One mutex guards all job state;
// a ticker thread advances processes, epilogs, time limits, the FIFO scheduler and purges;
// httplib's worker threads serve requests.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "sim/api_error.h"
#include "sim/cluster.h"
#include "sim/identity.h"
#include "sim/job.h"
#include "sim/sim_api.h"
#include "sim/simulator.h"
#include "sim/sluid.h"
#include "sim/slurmdb_ledger.h"
#include "sim/submit_request.h"
#include "sim/unix_bridge.h"

namespace tuneplane::sim {

class SimulatorImpl final : public Simulator {
 public:
  SimulatorImpl(SimulatorOptions options, ClusterConfig cluster, std::string key,
                std::string state_dir, bool own_state_dir);
  ~SimulatorImpl() override;

  Status serve();  // binds and starts the threads; called once by Simulator::start
  // The versions served, oldest first, and the release the newest stands for.
  // REQUIRES: options_.api_versions named only versions simApis() has (start() checks).
  const SimRelease& release() const { return served_.back()->release; }

  // Simulator (the faults in faults.cc, the rest in simulator.cc)
  std::string baseUrl() const override;
  void dropNextSubmitResponses(int count) override;
  void resetNextSubmitConnections(int count) override;
  void failNextRequests(int count, int http_status) override;
  void setLatency(std::chrono::milliseconds latency) override;
  void expireTokens() override;
  Status endJob(const std::string& job, const std::string& base_state) override;
  Status preemptJob(const std::string& job, std::chrono::seconds grace) override;
  void restart() override;
  void pauseScheduling(bool paused) override;
  void duplicateNextSubmits(int count) override;
  Status requeueJob(const std::string& job, bool hold) override;
  Status stallDeletes(const std::string& job, int count, std::chrono::milliseconds hold) override;
  Status neverStart(const std::string& job, const std::string& reason) override;
  void neverStartNextSubmits(int count, const std::string& reason) override;
  Status purgeJob(const std::string& job) override;
  void lieAboutReads(std::chrono::milliseconds window) override;
  void makeNextClaimsUncreatable(int count, bool as_dangling_link) override;
  nlohmann::json history() const override;
  std::string stateDir() const override { return state_dir_; }
  size_t jobCount() const override;

 private:
  using json = nlohmann::json;

  // --- time (simulator.cc): every reading goes through options_.clock (simulator.h).
  SimInstant steadyNow() const { return SimInstant(clock_.steadyMs()); }
  int64_t nowUnix() const { return clock_.nowMs() / 1000; }
  int64_t nowUnixMs() const { return clock_.nowMs(); }
  // The real time in Unix seconds, for what real processes stamped: a token's iat and exp.
  static int64_t realNowUnix();
  // Now in Unix microseconds, real time: when a run started and ended, in the history (the
  // bound a test puts on a killed command, which could not record its own end, against the
  // times its real process recorded on the node).
  static int64_t unixMicros();
  // Waits until the clock reads `until` (or the simulator stops). A driven clock moves when
  // its test says, so the wait re-reads it every few milliseconds instead of sleeping the
  // difference. REQUIRES: `lock` holds mu_ (released while waiting).
  void waitForClockLocked(std::unique_lock<std::mutex>& lock, SimInstant until);

  // --- engine (job_table.cc; scheduling and starts in job_launch.cc); REQUIRES: mu_ held for
  // every *Locked function.
  uint32_t nextIdLocked();
  void touchLocked(Job& job);
  Job* findLocked(const std::string& id_or_sluid);
  std::vector<Job*> componentsLocked(Job& any);  // the het job's components, or {job}
  Job& leaderLocked(Job& any);                   // the het job's leader, or the job itself
  void tickLocked();
  void scheduleLocked();
  // The backfill scheduler's start_time of each job (its components) that could not start.
  void estimateStartsLocked(const std::vector<std::vector<Job*>>& waiting);
  bool startLocked(std::vector<Job*> comps);
  void beginKillLocked(Job& leader, const std::string& state, const std::string& reason, int sig);
  // scancel: a pending job (every component) is CANCELLED at once; a running one is sent
  // SIGTERM and goes through COMPLETING. REQUIRES: mu_ held.
  void cancelLocked(Job& leader);
  void finishProcessLocked(Job& leader, bool signaled, int code);
  // The end of a requeue, once the epilog is done (Slurm's batch_requeue_fini): a new SLUID,
  // no allocation, a new submit time, and BeginTime (or held) before it may run again.
  void finishRequeueLocked(Job& job);
  // A DELETE stalled by stallDeletes (faults.cc): true when `job` is named by one; waits out
  // the hold.
  bool stallDeleteLocked(std::unique_lock<std::mutex>& lock, const Job& job);
  // `user`: the acting user, known (its jobs carry its uid, gid and group).
  json submitLocked(const SubmitPlan& plan, const UnixUser& user, uint32_t* leader_id);
  void leaveRejectedLocked(const SubmitRejection& rejection, const UnixUser& user);
  void tickerLoop();

  // --- HTTP: the dispatch, auth and answers (http_routes.cc)
  void installRoutes();
  void handle(const httplib::Request& req, httplib::Response& res);
  json meta(const SimApi& api) const;
  // A JSON answer of `api`'s shape (its meta; errors and warnings when absent).
  void sendJson(const SimApi& api, httplib::Response& res, int status, json body) const;
  // The same for answers outside a version's routes (the admin route): the newest served.
  void sendJson(httplib::Response& res, int status, json body) const;
  // A text/plain answer (slurmrestd's 401, 404 and 500 texts, the admin route's refusals).
  static void sendText(httplib::Response& res, int status, const std::string& text);
  // Closes the request's connection with no answer (FIN), or with `reset` a TCP RST.
  void dropConnection(const httplib::Request& req, bool reset = false) const;
  // The loopback-only admin routes: faults and the history (admin_routes.cc).
  void handleAdmin(const httplib::Request& req, httplib::Response& res);
  // Each route answers in the shapes of `api`, the version of the request's path.
  void routeOpenApi(httplib::Response& res);
  void routePing(const SimApi& api, bool auth_ok, httplib::Response& res);
  // --- the job routes (job_routes.cc)
  // Whether `id` may stand in a /job/{id} path of this release (a SLUID needs sluid_paths).
  bool validJobId(const std::string& id) const;
  void routeSubmit(const SimApi& api, const httplib::Request& req, httplib::Response& res,
                   const std::string& user, bool auth_ok);
  void routeJobGet(const SimApi& api, const std::string& id, httplib::Response& res, bool auth_ok);
  // `user`: the acting user; only the job's own user, SlurmUser and root may cancel it.
  void routeJobDelete(const SimApi& api, const std::string& id, const httplib::Request& req,
                      httplib::Response& res, const std::string& user, bool auth_ok);
  void routeJobUpdate(const SimApi& api, const std::string& id, const httplib::Request& req,
                      httplib::Response& res, bool auth_ok);
  void routeJobs(const SimApi& api, const httplib::Request& req, httplib::Response& res,
                 bool auth_ok);
  void routeJobsDelete(const SimApi& api, const httplib::Request& req, httplib::Response& res,
                       const std::string& user, bool auth_ok);
  void routeJobsState(const SimApi& api, const httplib::Request& req, httplib::Response& res,
                      bool auth_ok);
  // --- the cluster's resources (cluster_routes.cc)
  void routePartitions(const SimApi& api, httplib::Response& res, bool auth_ok);
  void routeNodes(const SimApi& api, httplib::Response& res, bool auth_ok);
  // GET /conf (v0.0.45): the cluster's name and preemption settings; 404 text on a version
  // without the route (v0.0.44), as 26.05.3 answers (24_conf).
  void routeConf(const SimApi& api, httplib::Response& res, bool auth_ok);
  // GET /licenses/: none; what a version whose ping cannot say why checks a token with.
  void routeLicenses(const SimApi& api, httplib::Response& res, bool auth_ok);
  // --- the dispatch's checks (http_routes.cc)
  // lieAboutReads: answers a read with its lie; false when reads are true now (or `route`
  // is not one of the three).
  bool lieAboutRead(const SimApi& api, const std::string& method, const std::string& route,
                    httplib::Response& res);
  // Token check; fills `user` with the acting user (identity.h: the token's, or the one
  // X-SLURM-USER-NAME names for SlurmUser and root). False → the route answers its own 511.
  bool authenticate(const httplib::Request& req, std::string* user, bool* has_token);
  // Whether `user` may act for others and cancel any job (options_.slurm_user, root).
  bool isOperatorUser(const std::string& user) const {
    return isOperator(user, options_.slurm_user);
  }
  // makeNextClaimsUncreatable: blocks the claim beside `stdout_path` (job_launch.cc).
  // REQUIRES: mu_ held.
  void spoilClaimLocked(const std::string& stdout_path);
  // slurmctld stores accounting in slurmdbd: the cluster file enforces associations
  // (`accounting:`) or slurmrestd serves slurmdbd's routes (--accounting). Answers say so
  // (meta.plugin.accounting_storage; no "accounting storage is disabled" warning).
  bool storesAccounting() const { return cluster_.accounting.has_value() || options_.accounting; }
  // Every path under /slurmdb/ (slurmdb_routes.cc): slurmrestd's openapi/slurmdbd plugin,
  // loaded with --accounting (options_.accounting); without it each answers 404 text
  // (22_no_slurmdbd).
  void routeSlurmdb(const httplib::Request& req, httplib::Response& res);

  const SimulatorOptions options_;
  const SystemClock system_clock_;
  const Clock& clock_;                       // options_.clock, or system_clock_
  const std::vector<const SimApi*> served_;  // oldest first
  const ClusterConfig cluster_;
  const std::string key_;
  const std::string state_dir_;
  const bool own_state_dir_;
  std::string bin_dir_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<uint32_t, Job> jobs_;
  uint32_t next_id_ = 1;
  SluidGenerator sluids_;
  int64_t last_update_ = 0;  // Unix seconds of the last change of any job

  // Faults (guarded by mu_).
  int drop_submits_ = 0;
  int reset_submits_ = 0;
  int fail_requests_ = 0;
  int fail_status_ = 500;
  std::chrono::milliseconds latency_{0};
  bool scheduling_paused_ = false;
  int duplicate_submits_ = 0;
  int stuck_submits_ = 0;
  std::string stuck_submit_reason_;
  struct StalledDeletes {
    int count = 0;
    std::chrono::milliseconds hold{0};
  };
  std::map<uint32_t, StalledDeletes> stalled_deletes_;  // by numeric id
  SimInstant lie_until_{};                              // lieAboutReads: reads lie until then
  int uncreatable_claims_ = 0;                          // makeNextClaimsUncreatable
  bool claims_as_links_ = false;
  int64_t token_cutoff_ = 0;           // tokens issued before this are expired
  std::set<std::string> seen_tokens_;  // tokens used so far (expireTokens refuses them)
  std::set<std::string> expired_tokens_;

  // Every job ever created (Simulator::history); a leader's Job::history indexes it.
  struct HistoryEntry {
    uint32_t job_id = 0;
    std::vector<std::string> sluids;
    std::string comment;
    int components = 1;
    int starts = 0;
    std::string state;
    bool purged = false;
    nlohmann::json runs = nlohmann::json::array();  // per start (Simulator::history)
  };
  std::vector<HistoryEntry> history_;
  SlurmdbLedger slurmdb_;  // slurmdbd's run records (options_.accounting; slurmdb_ledger.h)
  void recordHistoryLocked(const Job& leader);  // refreshes its entry from the live job

  httplib::Server server_;
  int port_ = 0;
  std::unique_ptr<UnixBridge> bridge_;
  std::thread server_thread_;
  std::atomic<bool> listen_returned_{false};  // the server thread's listen loop has ended
  std::thread ticker_thread_;
  std::atomic<bool> stopping_{false};
};

}  // namespace tuneplane::sim
