// RawHttpConnection: a TCP connection to a loopback HTTP server that sends exactly the bytes
// it is given — a partial request, two pipelined requests, a trickle — and reads answers
// with a bound on every wait. What the API's hostile-client tests and the slow-clients
// benchmark need and a real HTTP client will not do. Header-only: tests and bench share it.
// Thread-safety: one connection belongs to one thread.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace tuneplane::test {

class RawHttpConnection {
 public:
  // Connects to 127.0.0.1:port from `source` (another 127.x.y.z address: a distinct client
  // address for the server's per-client cap). Check ok() before use.
  RawHttpConnection(int port, const std::string& source = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      close();
    }
  }
  ~RawHttpConnection() { close(); }
  RawHttpConnection(const RawHttpConnection&) = delete;
  RawHttpConnection& operator=(const RawHttpConnection&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Sends all of `bytes`; false when the connection is gone.
  bool send(std::string_view bytes) {
    while (!bytes.empty() && fd_ >= 0) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return fd_ >= 0;
  }

  // Reads what arrives within `limit` of the last byte until `complete(received)` says
  // enough, or the peer closes. The bytes read so far (also kept in received()).
  template <class Complete>
  const std::string& readUntil(Complete complete, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (fd_ >= 0 && !complete(received_)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buffer[8192];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      received_.append(buffer, static_cast<std::size_t>(n));
    }
    return received_;
  }

  // Reads until `count` complete answers (status line, headers, Content-Length body) have
  // arrived, or `limit` passes. Their status codes, in order, in statuses().
  int readAnswers(int count, std::chrono::milliseconds limit) {
    readUntil([count](const std::string& text) { return countAnswers(text) >= count; }, limit);
    return countAnswers(received_);
  }
  // Whether the peer closed the connection (seen by a read).
  bool closedByPeer() const { return closed_; }
  const std::string& received() const { return received_; }
  void clearReceived() { received_.clear(); }

  // The status of the first answer in `text`, 0 when there is none.
  static int firstStatus(std::string_view text) {
    if (!text.starts_with("HTTP/1.1 ") || text.size() < 12) return 0;
    return std::atoi(std::string(text.substr(9, 3)).c_str());
  }

  // Complete answers at the start of `text` (each with a Content-Length body).
  static int countAnswers(std::string_view text) {
    int count = 0;
    while (true) {
      const auto head_end = text.find("\r\n\r\n");
      if (head_end == std::string_view::npos) return count;
      const std::string head = lower(text.substr(0, head_end));
      std::size_t length = 0;
      if (const auto at = head.find("\r\ncontent-length:"); at != std::string::npos) {
        length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
      }
      if (text.size() < head_end + 4 + length) return count;
      ++count;
      text.remove_prefix(head_end + 4 + length);
    }
  }

  static std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  }

 private:
  int fd_ = -1;
  bool closed_ = false;
  std::string received_;
};

}  // namespace tuneplane::test
