// WakeupListener: LISTEN/NOTIFY across replicas on PostgreSQL, so a job created or cancelled
// through a standby reaches the leader's control loop without waiting for its poll interval.
// PostgresJobStore sends NOTIFY on kWakeChannel inside the write transaction of every API
// request (createJob, requestCancel, requestAbandon), so the notice goes out when, and only
// if, the request commits; each replica's listener calls its callback (serve: wake the loop;
// a standby's loop then finds nothing to do). A lost notice costs one poll interval, never a
// job: the loop polls anyway.
// The listener has a connection and a thread of its own; it waits on the connection's socket
// at most kListenPollMs at a time, so stopping it is bounded, and reconnects (and listens
// again) when the session is lost.
// Thread-safety: the callback runs on the listener's thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/result.h"
#include "store/pg_connection.h"

namespace tuneplane::store {

inline constexpr const char* kWakeChannel = "tuneplane_wake";
inline constexpr int kListenPollMs = 250;

class WakeupListener {
 public:
  // Connects and LISTENs before returning, so no notice committed after it returns is missed.
  static Result<std::unique_ptr<WakeupListener>> open(const std::string& uri,
                                                      const PgConnectionOptions& connection,
                                                      std::function<void()> on_wake);
  ~WakeupListener();  // stops and joins the thread (bounded by kListenPollMs)
  WakeupListener(const WakeupListener&) = delete;
  WakeupListener& operator=(const WakeupListener&) = delete;

 private:
  WakeupListener(std::unique_ptr<PgConnection> session, std::function<void()> on_wake);
  void run(std::stop_token stop);

  std::unique_ptr<PgConnection> session_;  // used by the thread only
  const std::function<void()> on_wake_;
  std::jthread thread_;
};

}  // namespace tuneplane::store
