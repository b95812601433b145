// A unix-socket front for the simulator: cpp-httplib 0.11 cannot listen on a unix socket,
// so this accepts there and splices each connection's bytes to the simulator's internal
// loopback TCP port. Closing either side closes the other, so a dropped response on the
// TCP side is an empty reply on the unix side too. Owns one accept thread and one thread
// per live connection; the destructor stops and joins them all.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"

namespace tuneplane::sim {

class UnixBridge {
 public:
  static Result<std::unique_ptr<UnixBridge>> start(const std::string& socket_path, int target_port);
  ~UnixBridge();
  UnixBridge(const UnixBridge&) = delete;
  UnixBridge& operator=(const UnixBridge&) = delete;

 private:
  UnixBridge(std::string path, int listen_fd, int target_port);
  void acceptLoop();
  void splice(int client_fd);

  const std::string path_;
  const int listen_fd_;
  const int target_port_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::thread> connections_;
  std::vector<int> open_fds_;
  std::thread accept_thread_;
};

}  // namespace tuneplane::sim
