// Address ranges (server.trusted_proxies) and the client behind a reverse proxy. A site that
// puts serve behind nginx names the proxy's addresses; a request from one of them carries the
// client in X-Forwarded-For, each proxy appending the address it saw. The client is the
// rightmost entry that is not a trusted proxy (entries to its left were written by the client
// and prove nothing); a request from any other peer is that peer, whatever it sends. The
// per-client connection cap and the access log then see the client, not the proxy.
// Pure functions over plain values (inet_pton; no I/O). Thread-safety: none needed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tuneplane::api {

// One IPv4 or IPv6 network (an address is a /32 or /128). IPv4-mapped IPv6 addresses
// (::ffff:a.b.c.d) are compared as the IPv4 address they carry.
struct NetworkRange {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 in the first four
  int prefix = 0;                   // bits that must match
  std::string text;                 // as the site file wrote it

  bool operator==(const NetworkRange&) const = default;
};
using NetworkRanges = std::vector<NetworkRange>;

// "10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8". Errors: "server.invalid_proxy" (`field`).
Result<NetworkRange> parseNetworkRange(std::string_view text, const std::string& field);

// A literal address: "10.1.2.3", "::1", "[::1]", also with a port ("10.1.2.3:5000",
// "[::1]:5000"), as X-Forwarded-For entries are written. nullopt when it is not one.
std::optional<NetworkRange> parseAddress(std::string_view text);

bool contains(const NetworkRanges& ranges, std::string_view address);

struct ClientAddress {
  std::string address;     // the client as the caps and the access log count it
  bool forwarded = false;  // taken from X-Forwarded-For (the peer is a trusted proxy)
};

// The client of a request from `peer` whose X-Forwarded-For headers are `forwarded_for`
// (every such header, in the order received; each a comma-separated list). Only a peer in
// `trusted` is believed: its list is walked from the right past every trusted proxy, and the
// first other entry is the client. No header, or every entry trusted: the leftmost entry (or
// the peer when there is none). An entry that is not an address stops the walk: the entry to
// its right (or the peer) is the client, since nothing further left can be believed.
ClientAddress clientAddress(std::string_view peer, const std::vector<std::string>& forwarded_for,
                            const NetworkRanges& trusted);

// What the per-client connection cap counts `address` under: an IPv4 address (or an
// IPv4-mapped IPv6 one) is itself; an IPv6 address is its network of `ipv6_prefix` bits,
// written "2001:db8:1:2::/64" — one site is usually given a whole /64, so a client rotating
// addresses inside it would otherwise get a fresh share for each. Anything that is not an
// address (a Unix socket's peer, "") is itself. REQUIRES: 0 < ipv6_prefix <= 128.
std::string clientShareKey(std::string_view address, int ipv6_prefix);

}  // namespace tuneplane::api
