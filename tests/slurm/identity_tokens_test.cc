// Slurm as the user (slurm/identity_tokens.h, client_factory.h, SlurmRestClient::as): on a
// per_user site a client's view for alice sends X-SLURM-USER-NAME: alice with, in proxy mode,
// the site's (SlurmUser) token, and otherwise a token minted for alice; a view is made once per
// user and its token reused, not minted per request; on a shared site as() is the client.
// Against a scripted slurmrestd on loopback.
#include "slurm/identity_tokens.h"

#include <fstream>

#include "../catalog/temp_dir.h"
#include "scripted_server.h"
#include "slurm/client_factory.h"
#include "support/fixtures.h"

namespace tuneplane::slurm {
namespace {

using scripted::header;
using scripted::reply;
using scripted::ScriptedServer;

class IdentityTokensTest : public ::testing::Test {
 protected:
  IdentityTokensTest()
      : server_([](const httplib::Request&, httplib::Response& res, int) {
          reply(res, 200, test::transcriptResponseBody("01_ping.json", "ping without"));
        }) {}

  catalog::SlurmSite site(catalog::IdentityMode mode, bool proxy) {
    catalog::SlurmSite s;
    s.url = server_.url();
    s.api_version = "v0.0.45";
    s.user = proxy ? "slurm" : "tpuser";
    s.identity = mode;
    if (proxy) {
      std::ofstream(dir_.path() + "/token") << "SLURM_JWT=slurmuser-token\n";
      s.token_file = dir_.path() + "/token";
    } else {
      std::ofstream(dir_.path() + "/key") << "0123456789abcdef0123456789abcdef";
      s.jwt_key_file = dir_.path() + "/key";
    }
    return s;
  }
  std::unique_ptr<SlurmRestClient> client(const catalog::SlurmSite& s) {
    auto factory = SlurmClientFactory::fromSite(s);
    EXPECT_TRUE(factory) << factory.error().describe();
    auto made = factory->make();
    EXPECT_TRUE(made) << made.error().describe();
    return std::move(*made);
  }

  tuneplane::testing::TempDir dir_;
  ScriptedServer server_;
};

TEST_F(IdentityTokensTest, ProxyModeSendsTheSlurmUserTokenAndNamesTheUser) {
  auto c = client(site(catalog::IdentityMode::kPerUser, /*proxy=*/true));
  ASSERT_TRUE(c->ping());
  ASSERT_TRUE(c->as("alice").ping());
  ASSERT_TRUE(c->as("bob").ping());
  const auto seen = server_.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(header(seen[0], "X-SLURM-USER-NAME"), "slurm");
  EXPECT_EQ(header(seen[1], "X-SLURM-USER-NAME"), "alice");
  EXPECT_EQ(header(seen[2], "X-SLURM-USER-NAME"), "bob");
  for (const auto& s : seen) EXPECT_EQ(header(s, "X-SLURM-USER-TOKEN"), "slurmuser-token");
}

TEST_F(IdentityTokensTest, MintedModeSendsATokenOfTheUsersOwnMintedOnce) {
  auto c = client(site(catalog::IdentityMode::kPerUser, /*proxy=*/false));
  SlurmClient& alice = c->as("alice");
  EXPECT_EQ(&c->as("alice"), &alice);  // one view per user
  ASSERT_TRUE(alice.ping());
  ASSERT_TRUE(alice.ping());
  ASSERT_TRUE(c->ping());
  const auto seen = server_.seen();
  ASSERT_EQ(seen.size(), 3u);
  auto claims = unverifiedClaims(header(seen[0], "X-SLURM-USER-TOKEN"));
  ASSERT_TRUE(claims && claims->user);
  EXPECT_EQ(*claims->user, "alice");
  EXPECT_EQ(header(seen[0], "X-SLURM-USER-NAME"), "alice");
  // Cached: the same token on the next request, no key work per request.
  EXPECT_EQ(header(seen[1], "X-SLURM-USER-TOKEN"), header(seen[0], "X-SLURM-USER-TOKEN"));
  auto service = unverifiedClaims(header(seen[2], "X-SLURM-USER-TOKEN"));
  ASSERT_TRUE(service && service->user);
  EXPECT_EQ(*service->user, "tpuser");
}

TEST_F(IdentityTokensTest, TwoClientsOfOneFactoryShareEachUsersToken) {
  auto factory = SlurmClientFactory::fromSite(site(catalog::IdentityMode::kPerUser, false));
  ASSERT_TRUE(factory);
  auto a = factory->make();
  auto b = factory->make({.max_attempts = 1, .timeout_cap = std::chrono::milliseconds(3000)});
  ASSERT_TRUE(a && b);
  ASSERT_TRUE((*a)->as("alice").ping());
  ASSERT_TRUE((*b)->as("alice").ping());
  const auto seen = server_.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(header(seen[0], "X-SLURM-USER-TOKEN"), header(seen[1], "X-SLURM-USER-TOKEN"));
  EXPECT_EQ(factory->mechanism(), IdentityMechanism::kMintedToken);
}

TEST_F(IdentityTokensTest, OnASharedSiteEveryIdentityIsTheService) {
  auto c = client(site(catalog::IdentityMode::kShared, /*proxy=*/false));
  EXPECT_EQ(&c->as("alice"), c.get());
  ASSERT_TRUE(c->as("alice").ping());
  const auto seen = server_.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(header(seen[0], "X-SLURM-USER-NAME"), "tpuser");
}

// Slurm's answer for a user slurmctld does not know (500, error 6010, transcript 19_identity)
// is a refusal: not retried, the token not refreshed (it is not the token's fault), and a
// submit that got it made no job — so the attempt is refused, never looked for or resent.
TEST(IdentityRefusalTest, AUserSlurmDoesNotKnowIsARefusalNotAnAuthFailure) {
  ScriptedServer server([](const httplib::Request&, httplib::Response& res, int) {
    reply(res, 500,
          test::transcriptResponseBody("19_identity.json", "proxy mode for a user no host knows"));
  });
  scripted::Harness h(server.url());
  auto receipt =
      h.client->as("nosuchuser")
          .submit(nlohmann::json::parse(
              R"({"job": {"name": "x", "script": "#!/bin/bash\ntrue\n", "environment": ["A=1"],
          "current_working_directory": "/tmp"}})"));
  ASSERT_FALSE(receipt);
  EXPECT_EQ(receipt.error().error.code, kErrRejected) << receipt.error().describe();
  EXPECT_EQ(receipt.error().transport, TransportClass::kRejected);
  EXPECT_EQ(receipt.error().slurm_error_number, kSlurmUserUnknown);
  EXPECT_EQ(server.seen().size(), 1u);         // sent once
  EXPECT_EQ(h.tokens->generation_.load(), 0);  // the token was not blamed
}

}  // namespace
}  // namespace tuneplane::slurm
