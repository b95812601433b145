// The HTTP seam of the Slurm client and the /v1 API client: one request in, one response (or
// a classified transport failure) out. CurlHttpTransport speaks http://, https:// (CA file,
// optional client cert) and unix:///path (a Unix socket) through one libcurl easy handle, reused so
// keep-alive connections survive between requests; a body goes out through a read callback
// libcurl cannot rewind, so libcurl never re-sends a request whose body left on a connection
// that then closed unanswered (see BodySource); a mutex serialises requests. It never
// logs and never puts request headers (which carry the token) into a failure message.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

#include "common/result.h"

namespace tuneplane::http {

// Whether the request may have been acted on. The reconciler's lost-submission rule rests
// on this: only kNotSent is safe to repeat for a request that changes something.
enum class TransportClass {
  kNotSent,   // provably never reached the server: connect refused, DNS, TLS handshake
  kUnknown,   // may have reached the server: timeout after sending, reset, empty reply
  kRejected,  // the server answered (any HTTP status, or a 200 whose content says no)
};

const char* toString(TransportClass transport);  // "not_sent", "unknown", "rejected"

// The error code of CurlHttpTransport::create (its callers name the setting in their own
// codes: the Slurm client answers "slurm.config", the API client "cli.invalid_server").
inline constexpr const char* kErrBadUrl = "http.bad_url";

// What a download's sink sees of the answer before its first byte: the status and the
// response headers named in HttpRequest::keep_headers.
struct HttpResponseHead {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names as requested
  // The value of `name` (as named in keep_headers), "" when the answer has none.
  std::string header(std::string_view name) const;
};

// A download's sink: each piece of a 2xx answer's body as it arrives; false stops the
// transfer (it then fails with CURLE_WRITE_ERROR).
using BodySinkFn = std::function<bool(const HttpResponseHead& head, std::string_view chunk)>;

struct HttpRequest {
  std::string method;  // GET, POST, DELETE
  std::string target;  // path and query, e.g. "/slurm/v0.0.45/jobs/?update_time=5"
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// How HttpTransport::download hands out an answer.
struct HttpDownload {
  // Response headers to keep (HttpResponse::headers, HttpResponseHead), e.g. "ETag".
  std::vector<std::string> keep_headers;
  // Each piece of a 2xx answer's body (any other answer's body fills HttpResponse::body,
  // for its errors).
  BodySinkFn sink;
};

// Spare capacity CurlHttpTransport leaves after every response body, so that a JSON decoder
// that reads past the end (simdjson reads whole 64-byte blocks) can parse it in place.
inline constexpr size_t kBodyPadding = 64;

struct HttpResponse {
  int status = 0;
  std::string content_type;
  // From CurlHttpTransport: capacity() >= size() + kBodyPadding. Move it along; a copy
  // keeps the bytes but not the spare capacity (the decoder then copies it once more).
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // HttpRequest::keep_headers
};

struct TransportFailure {
  TransportClass transport = TransportClass::kUnknown;
  int curl_code = 0;
  std::string message;  // libcurl's words; never a header
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual tl::expected<HttpResponse, TransportFailure> perform(const HttpRequest& request) = 0;
  // A download: as perform(), but a 2xx answer's body goes to `download.sink` as it arrives,
  // never held whole. This default (a transport that cannot stream) performs the request
  // and hands the body over in one piece.
  virtual tl::expected<HttpResponse, TransportFailure> download(const HttpRequest& request,
                                                                const HttpDownload& download);
};

struct HttpOptions {
  std::string base_url;  // http://host:port, https://host:port or unix:///path/to/socket
  std::optional<std::string> ca_file;
  std::optional<std::string> client_cert;
  std::optional<std::string> client_key;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30000};  // whole request, connect included
};

// How libcurl's outcome maps onto the transport classes (pure; see http_transport.cc).
// `request_bytes_sent` is CURLINFO_REQUEST_SIZE, `connected` whether a connection was
// established (CURLINFO_CONNECT_TIME_T/PRETRANSFER_TIME_T > 0, or a reused connection).
TransportClass classifyCurlFailure(int curl_code, bool connected, long request_bytes_sent);

class CurlHttpTransport : public HttpTransport {
 public:
  // Errors: kErrBadUrl for a URL scheme other than http, https, unix.
  static Result<std::unique_ptr<CurlHttpTransport>> create(HttpOptions options);
  ~CurlHttpTransport() override;

  // HttpTransport:
  tl::expected<HttpResponse, TransportFailure> perform(const HttpRequest& request) override;
  // The body as it arrives; request_timeout bounds a stall (no byte for that long), not the
  // whole transfer.
  tl::expected<HttpResponse, TransportFailure> download(const HttpRequest& request,
                                                        const HttpDownload& download) override;

 private:
  struct CurlDeleter {
    void operator()(void* handle) const;
  };
  CurlHttpTransport(HttpOptions options, std::string url_prefix, std::string unix_socket);
  tl::expected<HttpResponse, TransportFailure> run(const HttpRequest& request,
                                                   const HttpDownload* download);

  HttpOptions options_;
  std::string url_prefix_;   // what targets are appended to
  std::string unix_socket_;  // empty unless unix://
  std::mutex mu_;
  std::unique_ptr<void, CurlDeleter> handle_;  // CURL*, reused for keep-alive
};

}  // namespace tuneplane::http
