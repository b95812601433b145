// HS256 JSON Web Tokens as slurmrestd's rest_auth/jwt uses them: claims `sun` (Slurm
// user name), `iat` and `exp`, signed with the site's shared key (AuthAltParameters
// jwt_key=…). Minting is for the client's token provider; verification is for the
// simulator. Pure functions: the caller supplies the time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tuneplane::jwt {

struct Claims {
  std::string user;      // "sun"
  int64_t issued_at{};   // "iat", Unix seconds
  int64_t expires_at{};  // "exp", Unix seconds
};

// Signs `claims` with `key` (raw bytes of the key file) into header.payload.signature.
std::string mintHs256(const Claims& claims, std::string_view key);

// Checks the signature and the expiry against `now_unix`. Error codes:
// "jwt.malformed", "jwt.bad_signature", "jwt.expired", "jwt.unsupported_alg".
// Messages never contain the token.
Result<Claims> verifyHs256(std::string_view token, std::string_view key, int64_t now_unix);

std::string base64UrlEncode(std::string_view bytes);
Result<std::string> base64UrlDecode(std::string_view text);

}  // namespace tuneplane::jwt
