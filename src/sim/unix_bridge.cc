#include "sim/unix_bridge.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tuneplane::sim {
namespace {

int connectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<UnixBridge>> UnixBridge::start(const std::string& socket_path,
                                                      int target_port) {
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof addr.sun_path)
    return fail("sim.listen", socket_path, "unix socket path too long");
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("sim.listen", socket_path, std::strerror(errno));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size());
  unlink(socket_path.c_str());  // a stale socket of an earlier run
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 64) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return fail("sim.listen", socket_path, "cannot listen: " + why);
  }
  return std::unique_ptr<UnixBridge>(new UnixBridge(socket_path, fd, target_port));
}

UnixBridge::UnixBridge(std::string path, int listen_fd, int target_port)
    : path_(std::move(path)), listen_fd_(listen_fd), target_port_(target_port) {
  accept_thread_ = std::thread([this] { acceptLoop(); });
}

UnixBridge::~UnixBridge() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : connections_) t.join();
  unlink(path_.c_str());
}

void UnixBridge::acceptLoop() {
  while (!stopping_) {
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR) continue;
      return;  // shut down
    }
    std::lock_guard<std::mutex> lock(mu_);
    connections_.emplace_back([this, client] { splice(client); });
  }
}

void UnixBridge::splice(int client_fd) {
  const int server_fd = connectLoopback(target_port_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(client_fd);
    if (server_fd >= 0) open_fds_.push_back(server_fd);
  }
  if (server_fd >= 0) {
    pollfd fds[2] = {{client_fd, POLLIN, 0}, {server_fd, POLLIN, 0}};
    bool open[2] = {true, true};
    char buf[16384];
    // Either side's EOF ends the splice: HTTP/1.1 here is request/response, and a server
    // that closed without answering must look the same on the unix side.
    while (open[0] && open[1] && !stopping_) {
      if (poll(fds, 2, 200) < 0 && errno != EINTR) break;
      for (int i = 0; i < 2; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          open[i] = false;
          break;
        }
        const int to = fds[1 - i].fd;
        for (ssize_t off = 0; off < n;) {
          const ssize_t w = send(to, buf + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
          if (w <= 0) {
            open[1 - i] = false;
            break;
          }
          off += w;
        }
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : {client_fd, server_fd}) {
    if (fd < 0) continue;
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
    shutdown(fd, SHUT_RDWR);
    close(fd);
  }
}

}  // namespace tuneplane::sim
