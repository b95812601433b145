// See network_ranges.h.
#include "api/network_ranges.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace tuneplane::api {
namespace {

constexpr std::array<uint8_t, 12> kV4MappedPrefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A bare address (no brackets, no port, no prefix) into `out`.
bool parseBare(std::string_view text, NetworkRange& out) {
  if (text.empty() || text.size() > INET6_ADDRSTRLEN) return false;
  const std::string copy(text);
  in_addr v4{};
  if (::inet_pton(AF_INET, copy.c_str(), &v4) == 1) {
    out.v6 = false;
    out.bytes = {};
    std::memcpy(out.bytes.data(), &v4, 4);
    out.prefix = 32;
    return true;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, copy.c_str(), &v6) != 1) return false;
  if (std::memcmp(&v6, kV4MappedPrefix.data(), kV4MappedPrefix.size()) == 0) {
    out.v6 = false;  // ::ffff:a.b.c.d is a.b.c.d
    out.bytes = {};
    std::memcpy(out.bytes.data(), reinterpret_cast<const uint8_t*>(&v6) + 12, 4);
    out.prefix = 32;
    return true;
  }
  out.v6 = true;
  std::memcpy(out.bytes.data(), &v6, 16);
  out.prefix = 128;
  return true;
}

bool matches(const NetworkRange& range, const NetworkRange& address) {
  if (range.v6 != address.v6) return false;
  const int whole = range.prefix / 8;
  if (std::memcmp(range.bytes.data(), address.bytes.data(), static_cast<std::size_t>(whole)) != 0) {
    return false;
  }
  const int rest = range.prefix % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (range.bytes[whole] & mask) == (address.bytes[whole] & mask);
}

std::vector<std::string_view> entries(const std::vector<std::string>& headers) {
  std::vector<std::string_view> out;
  for (const std::string& header : headers) {
    std::string_view rest = header;
    while (true) {
      const auto comma = rest.find(',');
      out.push_back(trim(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return out;
}

}  // namespace

Result<NetworkRange> parseNetworkRange(std::string_view text, const std::string& field) {
  const auto bad = [&](const std::string& why) {
    return fail("server.invalid_proxy", field,
                "'" + std::string(text) + "' is not an address or a network: " + why);
  };
  const std::string_view trimmed = trim(text);
  const auto slash = trimmed.find('/');
  NetworkRange range;
  if (!parseBare(trimmed.substr(0, slash), range)) {
    return bad("expected an IPv4 or IPv6 address, optionally /PREFIX (10.0.0.0/8, ::1)");
  }
  range.text = std::string(trimmed);
  if (slash == std::string_view::npos) return range;
  const std::string_view bits = trimmed.substr(slash + 1);
  int prefix = -1;
  const auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), prefix);
  const bool written_v6 = trimmed.substr(0, slash).find(':') != std::string_view::npos;
  const int max = written_v6 ? 128 : 32;
  if (bits.empty() || ec != std::errc() || end != bits.data() + bits.size() || prefix < 0 ||
      prefix > max) {
    return bad("the prefix must be 0.." + std::to_string(max));
  }
  if (range.v6 || !written_v6) {
    range.prefix = prefix;
  } else {
    range.prefix = prefix - 96;  // ::ffff:a.b.c.d/N counts the 96 bits of its prefix
    if (range.prefix < 0) return bad("an IPv4-mapped network needs a prefix of 96 or more");
  }
  return range;
}

std::optional<NetworkRange> parseAddress(std::string_view text) {
  text = trim(text);
  NetworkRange out;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view after = text.substr(close + 1);
    if (!after.empty() && after.front() != ':') return std::nullopt;
    if (!parseBare(text.substr(1, close - 1), out)) return std::nullopt;
    return out;
  }
  if (parseBare(text, out)) return out;
  // a.b.c.d:port (one colon: an IPv6 address has at least two)
  const auto colon = text.find(':');
  if (colon != std::string_view::npos && text.find(':', colon + 1) == std::string_view::npos &&
      parseBare(text.substr(0, colon), out) && !out.v6) {
    return out;
  }
  return std::nullopt;
}

bool contains(const NetworkRanges& ranges, std::string_view address) {
  if (ranges.empty()) return false;
  const auto parsed = parseAddress(address);
  if (!parsed) return false;
  for (const NetworkRange& range : ranges) {
    if (matches(range, *parsed)) return true;
  }
  return false;
}

ClientAddress clientAddress(std::string_view peer, const std::vector<std::string>& forwarded_for,
                            const NetworkRanges& trusted) {
  ClientAddress client{std::string(peer), false};
  if (forwarded_for.empty() || !contains(trusted, peer)) return client;
  const std::vector<std::string_view> hops = entries(forwarded_for);
  std::string_view believed;  // the leftmost entry walked so far
  for (auto hop = hops.rbegin(); hop != hops.rend(); ++hop) {
    const auto address = parseAddress(*hop);
    if (!address) break;  // not an address: nothing to its left can be believed
    believed = *hop;
    if (!contains(trusted, *hop)) break;  // the first untrusted hop from the right
  }
  if (believed.empty()) return client;
  client.address = std::string(believed);
  // The form the transport uses for peers: no brackets, no port.
  if (auto parsed = parseAddress(believed)) {
    char text[INET6_ADDRSTRLEN] = {};
    if (parsed->v6) {
      ::inet_ntop(AF_INET6, parsed->bytes.data(), text, sizeof text);
    } else {
      ::inet_ntop(AF_INET, parsed->bytes.data(), text, sizeof text);
    }
    client.address = text;
  }
  client.forwarded = true;
  return client;
}

std::string clientShareKey(std::string_view address, int ipv6_prefix) {
  const std::optional<NetworkRange> parsed = parseAddress(address);
  if (!parsed || !parsed->v6) return std::string(address);
  std::array<uint8_t, 16> network = parsed->bytes;
  for (int bit = ipv6_prefix; bit < 128; ++bit) {
    network[static_cast<std::size_t>(bit / 8)] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(AF_INET6, network.data(), text, sizeof text) == nullptr) {
    return std::string(address);
  }
  return std::string(text) + "/" + std::to_string(ipv6_prefix);
}

}  // namespace tuneplane::api
