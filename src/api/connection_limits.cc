// See connection_limits.h.
#include "api/connection_limits.h"

#include "api/network_ranges.h"

namespace tuneplane::api {

bool ConnectionLimits::admit(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  if (total_ >= max_total_ || !takeClient(address)) return false;
  ++total_;
  return true;
}

void ConnectionLimits::release(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  releaseClient(address);
  --total_;
}

bool ConnectionLimits::admitProxy() {
  std::lock_guard<std::mutex> lock(mu_);
  if (total_ >= max_total_) return false;
  ++total_;
  return true;
}

void ConnectionLimits::releaseProxy() {
  std::lock_guard<std::mutex> lock(mu_);
  --total_;
}

bool ConnectionLimits::admitForwarded(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  return takeClient(client);
}

void ConnectionLimits::releaseForwarded(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  releaseClient(client);
}

bool ConnectionLimits::takeClient(const std::string& address) {
  const std::string key = clientShareKey(address, ipv6_prefix_);
  int& mine = per_client_[key];
  if (mine >= max_per_client_) {
    if (mine == 0) per_client_.erase(key);
    return false;
  }
  ++mine;
  return true;
}

void ConnectionLimits::releaseClient(const std::string& address) {
  auto it = per_client_.find(clientShareKey(address, ipv6_prefix_));
  if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
}

}  // namespace tuneplane::api
