// The transport's connection caps on their own: the total, a client's share, a proxy's
// connections and the requests it forwards, an IPv6 client counted by its network.
#include "api/connection_limits.h"

#include <gtest/gtest.h>

namespace tuneplane::api {
namespace {

TEST(ConnectionLimitsTest, AClientGetsItsShareAndTheTotalHoldsForEveryone) {
  ConnectionLimits limits(/*total=*/3, /*per_client=*/2, /*ipv6_prefix=*/64);
  EXPECT_TRUE(limits.admit("10.0.0.1"));
  EXPECT_TRUE(limits.admit("10.0.0.1"));
  EXPECT_FALSE(limits.admit("10.0.0.1"));  // its share is used
  EXPECT_TRUE(limits.admit("10.0.0.2"));
  EXPECT_FALSE(limits.admit("10.0.0.3"));  // the total is used, whoever asks
  limits.release("10.0.0.1");
  EXPECT_TRUE(limits.admit("10.0.0.3"));
  EXPECT_FALSE(limits.admit("10.0.0.1"));  // the total again
  limits.release("10.0.0.2");
  EXPECT_TRUE(limits.admit("10.0.0.1"));  // its share came back with the release above
}

TEST(ConnectionLimitsTest, AProxyCountsInTheTotalAndEachForwardedRequestForItsClient) {
  ConnectionLimits limits(/*total=*/2, /*per_client=*/1, /*ipv6_prefix=*/64);
  EXPECT_TRUE(limits.admitProxy());
  EXPECT_TRUE(limits.admitProxy());
  EXPECT_FALSE(limits.admitProxy());
  EXPECT_TRUE(limits.admitForwarded("192.0.2.7"));
  EXPECT_FALSE(limits.admitForwarded("192.0.2.7"));  // one request of that client at a time
  EXPECT_TRUE(limits.admitForwarded("192.0.2.8"));   // another client is not held back
  limits.releaseForwarded("192.0.2.7");
  EXPECT_TRUE(limits.admitForwarded("192.0.2.7"));
  limits.releaseProxy();
  EXPECT_TRUE(limits.admitProxy());
}

TEST(ConnectionLimitsTest, AnIpv6ClientIsItsNetworkAndIpv4ItsAddress) {
  ConnectionLimits limits(/*total=*/100, /*per_client=*/1, /*ipv6_prefix=*/64);
  EXPECT_TRUE(limits.admit("2001:db8:1:2::1"));
  EXPECT_FALSE(limits.admit("2001:db8:1:2::ffff"));  // the same /64
  EXPECT_TRUE(limits.admit("2001:db8:1:3::1"));      // the next /64
  EXPECT_TRUE(limits.admit("198.51.100.1"));
  EXPECT_TRUE(limits.admit("198.51.100.2"));
  limits.release("2001:db8:1:2::1");
  EXPECT_TRUE(limits.admit("2001:db8:1:2::ffff"));
}

}  // namespace
}  // namespace tuneplane::api
