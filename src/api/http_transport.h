// HttpServerTransport: the HTTP/1.1 (and HTTPS) connection layer under ApiServer, on Boost.Beast
// and Boost.Asio (docs/decisions.md, "Boost.Beast + Boost.Asio replace cpp-httplib's server
// for the API"). It owns sockets, parsing, limits and TLS; it knows nothing of routes. Only
// http_transport.cc includes Boost, so the rest of the api module (and everything that includes
// api_server.h) compiles without it.
//
//   accept (caps: total, per client address; excess → 503 + close at once; a trusted
//           proxy's connection counts in the total, each request it forwards for its client)
//     ─► [TLS handshake] ─► wait for a request (idle_timeout)
//     ─► read headers + body under one deadline (request_timeout), header and body limits
//     ─► handler on the worker pool (`workers` threads; the I/O threads never run one)
//     ─► write the answer (request_timeout) ─► next request (pipelined bytes kept, in order)
//        or, for a streamed answer (body_stream.h): its header, then one chunk at a time,
//        each read on the worker pool and written under its own request_timeout
//
// Everything on a connection is asynchronous on `kIoThreads` I/O threads, so a slow or idle
// client costs a socket and a small buffer, never a thread. A request without
// Content-Length and Transfer-Encoding has an empty body (RFC 9112 §6.3).
// Behind a reverse proxy (HttpServerOptions::trusted_proxies) the per-client cap and
// HttpRequest::remote_addr follow the client X-Forwarded-For names (network_ranges.h).
// Thread-safety: start/stop/reloadTls from one thread; the handler runs on many at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/body_stream.h"
#include "api/http_message.h"
#include "api/server_config.h"
#include "common/result.h"

namespace tuneplane::api {

// What the transport refused before a handler saw the request.
enum class TransportRefusal {
  kBadRequest,      // 400: unparsable request, bad Content-Length
  kBodyTooLarge,    // 413: body over max_body_bytes
  kHeaderTooLarge,  // 431: header block over max_header_bytes
  kOverloaded,      // 503: too many connections (answered before any byte is read), or a
                    // forwarded request whose client is over its cap (after its headers)
};

class HttpServerTransport {
 public:
  // Runs on a worker thread for every complete request.
  using Handler = std::function<HttpResponse(HttpRequest&)>;
  // The answer for a refusal (runs on an I/O thread: must not block). `request` holds what
  // was read of the request line and headers (may be empty).
  using RefusalHandler = std::function<HttpResponse(TransportRefusal, const HttpRequest& request)>;

  // Binds, loads the certificate (when TLS) and starts the threads. Errors: "api.listen",
  // "api.tls" (the certificate or key cannot be loaded; names the setting, not the path).
  static Result<std::unique_ptr<HttpServerTransport>> start(HttpServerOptions options,
                                                            Handler handler,
                                                            RefusalHandler refusal);
  ~HttpServerTransport();  // stop()
  HttpServerTransport(const HttpServerTransport&) = delete;
  HttpServerTransport& operator=(const HttpServerTransport&) = delete;

  int port() const;
  bool tls() const;
  // Reads the certificate and key from `files` (the paths may have changed); connections
  // accepted afterwards use them. On an error the old ones stay. nullopt on a plain-HTTP
  // server is a no-op. Errors: "api.tls"; "api.no_tls" when `files` would add or remove TLS
  // (that takes a restart).
  Status reloadTls(const std::optional<TlsFiles>& files);
  // The files the current certificate came from; nullopt without TLS.
  std::optional<TlsFiles> tlsFiles() const;
  // Stops accepting, lets running handlers finish, closes every connection, joins. Idempotent.
  void stop();

  class Impl;

 private:
  explicit HttpServerTransport(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace tuneplane::api
