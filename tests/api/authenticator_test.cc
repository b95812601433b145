// Bearer tokens checked against the site file's SHA-256 hashes.
#include "api/authenticator.h"

#include <gtest/gtest.h>

#include "staging/stager.h"

namespace tuneplane::api {
namespace {

using staging::sha256Hex;  // what the site file's token_sha256 holds

TEST(AuthenticatorTest, Sha256HexOfAKnownVector) {
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AuthenticatorTest, TableOfHeaders) {
  const Authenticator auth({{"alice", sha256Hex("tok-a"), false},
                            {"root", sha256Hex("tok-r"), true},
                            {"alice", sha256Hex("tok-a2"), false}});
  struct Case {
    std::string header;
    std::string code;  // "" when accepted
    std::string user;
    bool admin;
  };
  const std::vector<Case> cases = {
      {"Bearer tok-a", "", "alice", false},
      {"Bearer tok-a2", "", "alice", false},  // a second token of the same user (rotation)
      {"Bearer tok-r", "", "root", true},
      {"", "auth.missing_token", "", false},
      {"Bearer ", "auth.missing_token", "", false},
      // The scheme is case-insensitive (RFC 9110 §11.1), one or more spaces follow it
      // (§11.4); the token is compared exactly.
      {"bearer tok-a", "", "alice", false},
      {"BEARER tok-a", "", "alice", false},
      {"BeArEr tok-r", "", "root", true},
      {"Bearer   tok-a", "", "alice", false},
      {"Bearer TOK-A", "auth.invalid_token", "", false},
      {"bearer Tok-a", "auth.invalid_token", "", false},
      {"Bearer", "auth.missing_token", "", false},
      {"Bearer    ", "auth.missing_token", "", false},
      {"Bearertok-a", "auth.missing_token", "", false},
      {"Bearer\ttok-a", "auth.missing_token", "", false},
      {"Bear tok-a", "auth.missing_token", "", false},
      {"Bearerx tok-a", "auth.missing_token", "", false},
      {"Basic dG9rLWE=", "auth.missing_token", "", false},
      {"Bearer tok-b", "auth.invalid_token", "", false},
      {"Bearer tok-a ", "auth.invalid_token", "", false},
      {"Bearer " + std::string(5000, 'x'), "auth.missing_token", "", false},
  };
  for (const auto& c : cases) {
    auto who = auth.authenticate(c.header);
    if (c.code.empty()) {
      ASSERT_TRUE(who) << c.header;
      EXPECT_EQ(who->user, c.user);
      EXPECT_EQ(who->admin, c.admin);
    } else {
      ASSERT_FALSE(who) << c.header;
      EXPECT_EQ(who.error().code, c.code) << c.header;
      EXPECT_EQ(who.error().message.find("tok-"), std::string::npos);
    }
  }
}

TEST(AuthenticatorTest, NoTokensConfiguredRefusesEveryone) {
  const Authenticator auth({});
  EXPECT_EQ(auth.authenticate("Bearer anything").error().code, "auth.invalid_token");
}

}  // namespace
}  // namespace tuneplane::api
