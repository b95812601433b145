#include "store/wakeup_listener.h"

#include <poll.h>

#include <chrono>
#include <utility>

namespace tuneplane::store {

Result<std::unique_ptr<WakeupListener>> WakeupListener::open(const std::string& uri,
                                                             const PgConnectionOptions& connection,
                                                             std::function<void()> on_wake) {
  auto session = PgConnection::open(uri, connection);
  if (!session) return fail(session.error());
  if (auto listening = (*session)->exec(std::string("LISTEN ") + kWakeChannel); !listening) {
    return fail(listening.error());
  }
  return std::unique_ptr<WakeupListener>(
      new WakeupListener(std::move(*session), std::move(on_wake)));
}

WakeupListener::WakeupListener(std::unique_ptr<PgConnection> session, std::function<void()> on_wake)
    : session_(std::move(session)), on_wake_(std::move(on_wake)) {
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

WakeupListener::~WakeupListener() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void WakeupListener::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    PGconn* conn = session_->raw();
    if (PQstatus(conn) != CONNECTION_OK) {
      // Lost: connect again and listen again; notices sent meanwhile are lost, which costs
      // at most one poll interval.
      if (!session_->ensureConnected() || !session_->exec(std::string("LISTEN ") + kWakeChannel)) {
        for (int i = 0; i < 4 && !stop.stop_requested(); ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(kListenPollMs));
        }
      }
      continue;
    }
    pollfd watched{PQsocket(conn), POLLIN, 0};
    if (::poll(&watched, 1, kListenPollMs) < 0) continue;
    if (PQconsumeInput(conn) == 0) continue;  // the status check above reconnects
    bool woken = false;
    while (PGnotify* notice = PQnotifies(conn)) {
      woken = true;
      PQfreemem(notice);
    }
    if (woken && on_wake_) on_wake_();
  }
}

}  // namespace tuneplane::store
