#include "common/jwt.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>

#include <nlohmann/json.hpp>

namespace tuneplane::jwt {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string hmacSha256(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data(), &length);
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

}  // namespace

std::string base64UrlEncode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(buffer >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (6 - bits)) & 0x3F]);
  return out;  // unpadded, as JWT requires
}

Result<std::string> base64UrlDecode(std::string_view text) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    auto pos = kAlphabet.find(c);
    if (pos == std::string_view::npos) {
      return fail("jwt.malformed", "", "token is not base64url");
    }
    buffer = (buffer << 6) | static_cast<uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

std::string mintHs256(const Claims& claims, std::string_view key) {
  const nlohmann::json header = {{"alg", "HS256"}, {"typ", "JWT"}};
  const nlohmann::json payload = {
      {"sun", claims.user}, {"iat", claims.issued_at}, {"exp", claims.expires_at}};
  std::string signing_input =
      base64UrlEncode(header.dump()) + "." + base64UrlEncode(payload.dump());
  std::string signature = base64UrlEncode(hmacSha256(key, signing_input));
  return signing_input + "." + signature;
}

Result<Claims> verifyHs256(std::string_view token, std::string_view key, int64_t now_unix) {
  const auto first = token.find('.');
  const auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return fail("jwt.malformed", "", "token does not have three parts");
  }
  const auto signing_input = token.substr(0, second);
  const auto expected = hmacSha256(key, signing_input);
  auto signature = base64UrlDecode(token.substr(second + 1));
  if (!signature) return fail(signature.error());
  if (signature->size() != expected.size() ||
      CRYPTO_memcmp(signature->data(), expected.data(), expected.size()) != 0) {
    return fail("jwt.bad_signature", "", "token signature does not verify");
  }
  auto header_text = base64UrlDecode(token.substr(0, first));
  auto payload_text = base64UrlDecode(token.substr(first + 1, second - first - 1));
  if (!header_text || !payload_text) return fail("jwt.malformed", "", "token is not base64url");
  const auto header = nlohmann::json::parse(*header_text, nullptr, false);
  const auto payload = nlohmann::json::parse(*payload_text, nullptr, false);
  if (header.is_discarded() || payload.is_discarded() || !header.is_object() ||
      !payload.is_object()) {
    return fail("jwt.malformed", "", "token header or payload is not a JSON object");
  }
  if (header.value("alg", "") != "HS256") {
    return fail("jwt.unsupported_alg", "", "token algorithm is not HS256");
  }
  Claims claims;
  if (!payload.contains("sun") || !payload["sun"].is_string() || !payload.contains("exp") ||
      !payload["exp"].is_number_integer()) {
    return fail("jwt.malformed", "", "token lacks the sun or exp claim");
  }
  claims.user = payload["sun"].get<std::string>();
  claims.expires_at = payload["exp"].get<int64_t>();
  claims.issued_at = payload.value("iat", int64_t{0});
  if (claims.expires_at <= now_unix) return fail("jwt.expired", "", "token has expired");
  return claims;
}

}  // namespace tuneplane::jwt
