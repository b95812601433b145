// ConnectionLimits: the API transport's caps on connections (http_transport.h): in total
// (server.max_connections) and per client (server.max_connections_per_client). A direct
// client's connection counts for its address while it is open. A trusted proxy's connection
// counts in the total only; each request it forwards counts for the client its
// X-Forwarded-For names while that request is read, handled and answered. An IPv6 client is
// its network (server.client_ipv6_prefix, clientShareKey in network_ranges.h): a host that
// may pick any address of its /64 is one client. Admitting and releasing are O(log n).
// Thread-safety: every member may be called from any thread (one mutex).
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace tuneplane::api {

class ConnectionLimits {
 public:
  ConnectionLimits(int total, int per_client, int ipv6_prefix)
      : max_total_(total), max_per_client_(per_client), ipv6_prefix_(ipv6_prefix) {}

  // A direct client's connection: the total and its address's share. False: over a cap.
  bool admit(const std::string& address);
  void release(const std::string& address);
  // A trusted proxy's connection: the total only.
  bool admitProxy();
  void releaseProxy();
  // One request forwarded by a proxy: its client's share only.
  bool admitForwarded(const std::string& client);
  void releaseForwarded(const std::string& client);

 private:
  bool takeClient(const std::string& address);
  void releaseClient(const std::string& address);

  std::mutex mu_;
  const int max_total_, max_per_client_, ipv6_prefix_;
  int total_ = 0;
  std::map<std::string, int> per_client_;  // by clientShareKey; a client at 0 is erased
};

}  // namespace tuneplane::api
