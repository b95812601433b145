#include "common/jwt.h"

#include <gtest/gtest.h>

namespace tuneplane::jwt {
namespace {

constexpr std::string_view kKey = "0123456789abcdef0123456789abcdef";

TEST(Jwt, MintedTokenVerifiesWithItsKey) {
  const auto token = mintHs256({"tpuser", 1000, 2000}, kKey);
  auto claims = verifyHs256(token, kKey, 1500);
  ASSERT_TRUE(claims) << claims.error().describe();
  EXPECT_EQ(claims->user, "tpuser");
  EXPECT_EQ(claims->issued_at, 1000);
  EXPECT_EQ(claims->expires_at, 2000);
}

TEST(Jwt, WrongKeyIsBadSignature) {
  const auto token = mintHs256({"tpuser", 1000, 2000}, kKey);
  auto claims = verifyHs256(token, "another key", 1500);
  ASSERT_FALSE(claims);
  EXPECT_EQ(claims.error().code, "jwt.bad_signature");
  EXPECT_EQ(claims.error().message.find(token), std::string::npos);
}

TEST(Jwt, ExpiredTokenIsRejected) {
  const auto token = mintHs256({"tpuser", 1000, 2000}, kKey);
  auto claims = verifyHs256(token, kKey, 2000);
  ASSERT_FALSE(claims);
  EXPECT_EQ(claims.error().code, "jwt.expired");
}

TEST(Jwt, TamperedPayloadIsRejected) {
  auto token = mintHs256({"tpuser", 1000, 2000}, kKey);
  const auto forged = mintHs256({"root", 1000, 2000}, kKey);
  // Take root's payload with tpuser's signature.
  const auto payload = forged.substr(forged.find('.'), forged.rfind('.') - forged.find('.'));
  token = token.substr(0, token.find('.')) + payload + token.substr(token.rfind('.'));
  EXPECT_EQ(verifyHs256(token, kKey, 1500).error().code, "jwt.bad_signature");
}

TEST(Jwt, MalformedTokens) {
  for (std::string_view bad : {"", "abc", "a.b", "a.b.c.d", "a.b.!!!"}) {
    auto claims = verifyHs256(bad, kKey, 0);
    ASSERT_FALSE(claims) << bad;
    EXPECT_TRUE(claims.error().code == "jwt.malformed" ||
                claims.error().code == "jwt.bad_signature")
        << bad << " → " << claims.error().code;
  }
}

TEST(Jwt, Base64UrlRoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= all.size(); n += 37) {
    const auto encoded = base64UrlEncode(all.substr(0, n));
    EXPECT_EQ(encoded.find_first_of("+/="), std::string::npos);
    EXPECT_EQ(base64UrlDecode(encoded).value(), all.substr(0, n));
  }
}

}  // namespace
}  // namespace tuneplane::jwt
