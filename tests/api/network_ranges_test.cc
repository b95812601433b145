// server.trusted_proxies and the client behind a reverse proxy, from tables: which ranges
// parse, which addresses they hold, and which hop of X-Forwarded-For is the client.
#include "api/network_ranges.h"

#include <gtest/gtest.h>

namespace tuneplane::api {
namespace {

NetworkRanges ranges(std::initializer_list<const char*> texts) {
  NetworkRanges out;
  for (const char* text : texts) {
    auto range = parseNetworkRange(text, "server.trusted_proxies[0]");
    EXPECT_TRUE(range) << text;
    if (range) out.push_back(*range);
  }
  return out;
}

TEST(NetworkRangesTest, ParsesAddressesAndNetworksAndRefusesTheRest) {
  for (const char* good : {"127.0.0.1", "10.0.0.0/8", "0.0.0.0/0", "::1", "fd00::/8", "::/0",
                           "192.168.1.7/32", "::ffff:10.0.0.0/104", " 10.1.2.3 "}) {
    EXPECT_TRUE(parseNetworkRange(good, "f")) << good;
  }
  for (const char* bad : {"", "localhost", "10.0.0.0/33", "::1/129", "10.0.0.0/", "10.0.0.0/x",
                          "10.0.0.1:80", "[::1]", "::ffff:10.0.0.0/8", "1.2.3.4/-1"}) {
    auto range = parseNetworkRange(bad, "server.trusted_proxies[2]");
    ASSERT_FALSE(range) << bad;
    EXPECT_EQ(range.error().code, "server.invalid_proxy");
    EXPECT_EQ(range.error().field, "server.trusted_proxies[2]");
  }
}

TEST(NetworkRangesTest, ContainsComparesByPrefixAndSeesMappedAddressesAsIpv4) {
  const NetworkRanges trusted = ranges({"10.0.0.0/8", "192.168.7.0/25", "fd00::/8", "127.0.0.1"});
  struct Row {
    const char* address;
    bool inside;
  };
  for (const Row& row : std::vector<Row>{{"10.255.1.2", true},
                                         {"11.0.0.1", false},
                                         {"192.168.7.127", true},
                                         {"192.168.7.128", false},
                                         {"fd12::1", true},
                                         {"fe80::1", false},
                                         {"127.0.0.1", true},
                                         {"127.0.0.2", false},
                                         {"::ffff:10.1.1.1", true},  // as Boost prints a v4 peer
                                         {"::ffff:127.0.0.1", true},
                                         {"[fd00::5]:443", true},
                                         {"10.0.0.1:8080", true},
                                         {"not an address", false},
                                         {"", false}}) {
    EXPECT_EQ(contains(trusted, row.address), row.inside) << row.address;
  }
  EXPECT_FALSE(contains({}, "10.0.0.1"));
}

TEST(NetworkRangesTest, TheClientIsTheRightmostHopThatIsNotATrustedProxy) {
  const NetworkRanges trusted = ranges({"127.0.0.1", "10.0.0.0/8"});
  struct Row {
    const char* name;
    const char* peer;
    std::vector<std::string> forwarded_for;
    const char* client;
    bool forwarded;
  };
  const std::vector<Row> rows = {
      {"direct client: the header is not believed",
       "203.0.113.9",
       {"198.51.100.1"},
       "203.0.113.9",
       false},
      {"proxy adds the client", "127.0.0.1", {"198.51.100.1"}, "198.51.100.1", true},
      {"a client's own entry to the left proves nothing",
       "127.0.0.1",
       {"1.1.1.1, 198.51.100.1"},
       "198.51.100.1",
       true},
      {"two trusted proxies in a row",
       "127.0.0.1",
       {"198.51.100.1, 10.2.3.4"},
       "198.51.100.1",
       true},
      {"several headers are one list",
       "127.0.0.1",
       {"1.1.1.1", "198.51.100.1, 10.0.0.9"},
       "198.51.100.1",
       true},
      {"every hop trusted: the leftmost", "127.0.0.1", {"10.0.0.1, 10.0.0.2"}, "10.0.0.1", true},
      {"no header: the proxy itself", "127.0.0.1", {}, "127.0.0.1", false},
      {"garbage at the right: the proxy", "127.0.0.1", {"198.51.100.1, bogus"}, "127.0.0.1", false},
      {"garbage to the left of a trusted hop stops the walk",
       "127.0.0.1",
       {"bogus, 10.0.0.3"},
       "10.0.0.3",
       true},
      {"IPv6 with brackets and a port", "127.0.0.1", {"[2001:db8::7]:5555"}, "2001:db8::7", true},
      {"IPv4 with a port", "127.0.0.1", {"198.51.100.1:4000"}, "198.51.100.1", true},
      {"a mapped peer", "::ffff:127.0.0.1", {"198.51.100.1"}, "198.51.100.1", true},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const ClientAddress client = clientAddress(row.peer, row.forwarded_for, trusted);
    EXPECT_EQ(client.address, row.client);
    EXPECT_EQ(client.forwarded, row.forwarded);
  }
}

TEST(NetworkRangesTest, AnIpv6ClientIsCountedByItsNetwork) {
  EXPECT_EQ(clientShareKey("2001:db8:1:2::7", 64), "2001:db8:1:2::/64");
  EXPECT_EQ(clientShareKey("2001:db8:1:2:ffff:1:2:3", 64), "2001:db8:1:2::/64");
  EXPECT_EQ(clientShareKey("[2001:db8:1:2::7]:443", 64), "2001:db8:1:2::/64");
  EXPECT_EQ(clientShareKey("2001:db8:1:3::7", 64), "2001:db8:1:3::/64");
  EXPECT_EQ(clientShareKey("2001:db8:1:2:ab00::1", 72), "2001:db8:1:2:ab00::/72");
  EXPECT_EQ(clientShareKey("2001:db8::1", 128), "2001:db8::1/128");
  // IPv4 (mapped or not) is counted per address; anything else as it is.
  EXPECT_EQ(clientShareKey("198.51.100.7", 64), "198.51.100.7");
  EXPECT_EQ(clientShareKey("::ffff:198.51.100.7", 64), "::ffff:198.51.100.7");
  EXPECT_EQ(clientShareKey("", 64), "");
  EXPECT_EQ(clientShareKey("unix", 64), "unix");
}

}  // namespace
}  // namespace tuneplane::api
