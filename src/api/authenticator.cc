// See authenticator.h.
#include "api/authenticator.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cctype>
#include <cstdio>
#include <memory>

namespace tuneplane::api {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool decodeHex(std::string_view hex, unsigned char (&out)[32]) {
  if (hex.size() != 64) return false;
  for (std::size_t i = 0; i < 32; ++i) {
    const int hi = hexValue(hex[2 * i]);
    const int lo = hexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return true;
}

// SHA-256 fetched from the provider once: SHA256() looks the algorithm up again on every
// call (EVP_MD_fetch: a lock and a property query), a third of a token check's time.
const EVP_MD* sha256Digest() {
  static const std::unique_ptr<EVP_MD, decltype(&EVP_MD_free)> md(
      EVP_MD_fetch(nullptr, "SHA256", nullptr), &EVP_MD_free);
  return md.get();
}

void sha256(std::string_view text, unsigned char (&digest)[SHA256_DIGEST_LENGTH]) {
  const EVP_MD* md = sha256Digest();
  if (md == nullptr || EVP_Digest(text.data(), text.size(), digest, nullptr, md, nullptr) != 1) {
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  }
}

// RFC 9110 §11.4: credentials = auth-scheme [ 1*SP token68 ], and the scheme is matched
// case-insensitively ("bearer", "BEARER"); the token itself is compared exactly. "" when
// `authorization` is not Bearer credentials.
std::string_view bearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') return {};
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return {};
  }
  const std::size_t token = authorization.find_first_not_of(' ', kScheme.size());
  return token == std::string_view::npos ? std::string_view() : authorization.substr(token);
}

}  // namespace

Authenticator::Authenticator(std::vector<ApiToken> tokens) {
  for (auto& token : tokens) {
    Entry entry{};
    if (!decodeHex(token.token_sha256, entry.digest)) continue;  // the loader refuses these
    const std::string unix_user = token.runAs();
    entry.principal = Principal{std::move(token.user), token.admin, std::move(token.slurm_accounts),
                                std::move(token.qos), unix_user};
    entries_.push_back(std::move(entry));
  }
}

Result<Principal> Authenticator::authenticate(std::string_view authorization) const {
  if (authorization.empty()) {
    return fail("auth.missing_token", "Authorization",
                "this route needs 'Authorization: Bearer <token>'");
  }
  const std::string_view token = bearerToken(authorization);
  if (token.empty() || authorization.size() > kMaxTokenBytes) {
    return fail("auth.missing_token", "Authorization", "expected 'Authorization: Bearer <token>'");
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  sha256(token, digest);
  const Entry* match = nullptr;
  for (const Entry& entry : entries_) {
    // Every entry is compared, whatever matched before.
    const bool equal = CRYPTO_memcmp(entry.digest, digest, sizeof digest) == 0;
    if (equal && match == nullptr) match = &entry;
  }
  if (match == nullptr) {
    return fail("auth.invalid_token", "Authorization", "the token is not valid here");
  }
  return match->principal;
}

}  // namespace tuneplane::api
