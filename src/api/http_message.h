// The API's own HTTP request and answer: what the transport (http_transport.h) reads off a
// connection and hands to ApiServer, and what the handlers fill in and the transport writes.
// Plain data, no I/O; one type each from the socket to the handler, so nothing is copied
// into another library's types on the way.
//
//   HttpServerTransport ─► HttpRequest (method, target, headers, body, peer)
//   ApiServer::dispatch ─► + path (decoded), params (decoded query), path_params (the route's
//                            {…} segments) ─► handler ─► HttpResponse ─► transport
//
// Header names compare without regard to case (RFC 9110 §5.1); a name may appear more than
// once, in the order it was sent. Thread-safety: none (a request belongs to one handler).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/body_stream.h"
#include "common/result.h"

namespace tuneplane::api {

// Orders header names without regard to ASCII case.
struct HeaderNameLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const;
};
using Headers = std::multimap<std::string, std::string, HeaderNameLess>;

// A decoded query: each name with its values in the order sent.
using QueryParams = std::multimap<std::string, std::string>;

struct HttpRequest {
  std::string method;  // as sent ("HEAD" is answered as GET without the body)
  std::string target;  // path and query, as sent
  Headers headers;
  std::string body;
  std::string remote_addr;  // the client: the peer, or behind a trusted proxy the address
                            // its X-Forwarded-For names (network_ranges.h)
  int remote_port = 0;      // the peer's port; 0 when remote_addr is a forwarded client
  std::string proxy_addr;   // the peer when it is a trusted proxy; "" otherwise

  // Filled by ApiServer::dispatch before the handler runs:
  std::string path;                      // the target's path, percent-decoded
  QueryParams params;                    // the target's query, decoded ('+' is a space)
  std::vector<std::string> path_params;  // the route template's {…} segments, in order

  // The first value of header `name`, "" when it is absent.
  std::string header(std::string_view name) const;
  bool hasHeader(std::string_view name) const { return headers.find(name) != headers.end(); }
  std::size_t headerCount(std::string_view name) const { return headers.count(name); }
};

struct HttpResponse {
  int status = 0;   // 0: no handler answered (served as 500)
  Headers headers;  // Content-Length and Connection are the transport's
  std::string body;
  bool head = false;  // an answer to HEAD: Content-Length of `body`, no body bytes
  // When set, the body is `stream_length` bytes read from `stream`, not `body` (a HEAD
  // answer gets the Content-Length alone).
  std::shared_ptr<BodyStream> stream;
  std::uint64_t stream_length = 0;

  // Adds a header (a name may be set more than once, e.g. Set-Cookie).
  void setHeader(std::string name, std::string value) {
    headers.emplace(std::move(name), std::move(value));
  }
  bool hasHeader(std::string_view name) const { return headers.find(name) != headers.end(); }
  // `body` with `content_type` (replacing any Content-Type set before).
  void setBody(std::string body_text, std::string_view content_type);
};

// Splits a request target into its percent-decoded path and its decoded query parameters
// ('&'-separated NAME=VALUE split at the first '=', a '+' in either is a space; a pair
// without '=' has an empty value; a pair with an empty name is dropped). A '%' not followed by
// two hex digits is refused: "api.bad_request" naming "path" (in the path) or "query" (in a
// name), "api.invalid_parameter" naming the parameter (in its value).
Status parseTarget(std::string_view target, std::string& path, QueryParams& params);

}  // namespace tuneplane::api
