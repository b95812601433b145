// The one error type of the /v1 client: the server's `errors[]` (code, field, message) as
// project Errors — or the client's own when no usable answer came — plus what a caller needs
// to choose an exit code: the HTTP status and whether the request may have been acted on.
// Never carries the token: the client removes it from every message it builds or receives.
#pragma once

#include <string>

#include <tl/expected.hpp>

#include "common/result.h"

namespace tuneplane::client {

enum class FailureKind {
  kNotSent,      // provably never reached the server: refused, DNS, TLS handshake, bad URL
  kNoAnswer,     // sent, but no answer came back: the server may have acted on it
  kHttp,         // the server answered with a 4xx or 5xx; `errors` are its errors[]
  kBadResponse,  // a 2xx whose body is not the API's JSON (is --server a TunePlane server?)
};

// Codes of the client itself (the server's are api.*, auth.*, spec.*, launch.*, …).
inline constexpr const char* kErrUnreachable = "client.unreachable";     // kNotSent
inline constexpr const char* kErrUntrusted = "client.untrusted_server";  // kNotSent: TLS verify
inline constexpr const char* kErrNoAnswer = "client.no_answer";          // kNoAnswer
inline constexpr const char* kErrHttp = "client.http_error";           // a 4xx/5xx without errors[]
inline constexpr const char* kErrBadResponse = "client.bad_response";  // kBadResponse

struct ApiError {
  FailureKind kind = FailureKind::kHttp;
  int http_status = 0;  // 0 unless kind is kHttp (or kBadResponse)
  Errors errors;        // never empty

  // Worth polling again when waiting: the server is away or restarting (no answer, 502,
  // 503, 504, 429), not a refusal that will repeat.
  bool transient() const;
};

template <typename T>
using ApiResult = tl::expected<T, ApiError>;

}  // namespace tuneplane::client
