#include "http/transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <new>
#include <optional>

namespace tuneplane::http {
namespace {

// Where a response body goes. The buffer is sized from Content-Length when the server sends
// one (no regrowth copies of a 50 MB answer) and always keeps kBodyPadding bytes spare.
struct BodySink {
  CURL* curl = nullptr;
  std::string* body = nullptr;
  bool sized = false;
  // A download (HttpTransport::download): a 2xx answer's body goes to its sink instead.
  const HttpDownload* download = nullptr;
  std::optional<HttpResponseHead> head;  // read at the first body byte
};

std::vector<std::pair<std::string, std::string>> keptHeaders(
    CURL* curl, const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : names) {
    curl_header* h = nullptr;
    // The last request's (-1), the answer's own headers, not a 1xx's or a redirect's.
    if (curl_easy_header(curl, name.c_str(), 0, CURLH_HEADER, -1, &h) == CURLHE_OK && h) {
      out.emplace_back(name, h->value);
    }
  }
  return out;
}

// Larger Content-Length claims are not trusted for the first allocation; the buffer then
// grows as the bytes arrive.
constexpr curl_off_t kMaxPresize = curl_off_t{1} << 30;

size_t appendBody(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const size_t n = size * count;
  std::string& body = *sink->body;
  try {
    if (sink->download != nullptr) {
      if (!sink->head) {
        long status = 0;
        curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &status);
        sink->head = HttpResponseHead{static_cast<int>(status),
                                      keptHeaders(sink->curl, sink->download->keep_headers)};
      }
      if (sink->head->status >= 200 && sink->head->status < 300) {
        return sink->download->sink(*sink->head, std::string_view(data, n)) ? n : 0;
      }
    }
    if (!sink->sized) {
      sink->sized = true;
      curl_off_t length = -1;
      if (curl_easy_getinfo(sink->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
          length > 0 && length <= kMaxPresize) {
        body.reserve(static_cast<size_t>(length) + kBodyPadding);
      }
    }
    const size_t needed = body.size() + n + kBodyPadding;
    if (body.capacity() < needed) body.reserve(std::max(needed, 2 * body.capacity()));
    body.append(data, n);
  } catch (const std::bad_alloc&) {
    return 0;  // libcurl fails the transfer (CURLE_WRITE_ERROR)
  }
  return n;
}

// A request body handed to libcurl through a read callback, with no seek callback on purpose:
// libcurl silently sends a request again on a fresh connection when a kept-alive one closes
// before any answer byte (Curl_retry_request), whatever the method. Once body bytes have left,
// that retry needs a rewind, and a body libcurl cannot rewind fails the transfer instead
// (CURLE_SEND_FAIL_REWIND), so a request that may have been acted on is never sent twice and
// its caller hears "unknown". A retry before any body byte left is still made: a server acts
// on no request it has not read whole. (CURLOPT_POSTFIELDS would be rewound and re-sent.)
struct BodySource {
  const std::string* body = nullptr;
  size_t sent = 0;
};

size_t readBody(char* buffer, size_t size, size_t count, void* user) {
  auto* source = static_cast<BodySource*>(user);
  const size_t n = std::min(size * count, source->body->size() - source->sent);
  std::memcpy(buffer, source->body->data() + source->sent, n);
  source->sent += n;
  return n;
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// curl_global_init is not thread-safe before libcurl 7.84; do it once, first.
void globalInitOnce() {
  static const bool done = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return true;
  }();
  (void)done;
}

}  // namespace

const char* toString(TransportClass transport) {
  switch (transport) {
    case TransportClass::kNotSent:
      return "not_sent";
    case TransportClass::kUnknown:
      return "unknown";
    case TransportClass::kRejected:
      return "rejected";
  }
  return "unknown";
}

TransportClass classifyCurlFailure(int curl_code, bool connected, long request_bytes_sent) {
  switch (static_cast<CURLcode>(curl_code)) {
    // Nothing left this machine that a server could act on.
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_FAILED_INIT:
    case CURLE_OUT_OF_MEMORY:
      return TransportClass::kNotSent;
    // A timeout is only provably harmless if no connection existed and no byte was sent.
    case CURLE_OPERATION_TIMEDOUT:
      return !connected && request_bytes_sent == 0 ? TransportClass::kNotSent
                                                   : TransportClass::kUnknown;
    // The request may have arrived: empty reply, reset, partial send or receive, or a
    // kept-alive connection that closed after the body left (libcurl refused to send it again).
    case CURLE_SEND_FAIL_REWIND:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    default:
      return TransportClass::kUnknown;
  }
}

void CurlHttpTransport::CurlDeleter::operator()(void* handle) const {
  curl_easy_cleanup(static_cast<CURL*>(handle));
}

Result<std::unique_ptr<CurlHttpTransport>> CurlHttpTransport::create(HttpOptions options) {
  globalInitOnce();
  std::string url = options.base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  std::string lower = url;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string prefix;
  std::string socket;
  if (lower.rfind("unix://", 0) == 0) {
    socket = url.substr(7);
    if (socket.empty() || socket.front() != '/') {
      return fail(kErrBadUrl, "url", "unix:// needs an absolute socket path");
    }
    prefix = "http://localhost";  // the host is ignored; the socket decides
  } else if (lower.rfind("http://", 0) == 0 || lower.rfind("https://", 0) == 0) {
    prefix = url;
  } else {
    return fail(kErrBadUrl, "url", "the URL must start with http://, https:// or unix://");
  }
  auto* transport = new CurlHttpTransport(std::move(options), std::move(prefix), std::move(socket));
  if (!transport->handle_) {
    delete transport;
    return fail(kErrBadUrl, "url", "libcurl could not create a handle");
  }
  return std::unique_ptr<CurlHttpTransport>(transport);
}

CurlHttpTransport::CurlHttpTransport(HttpOptions options, std::string url_prefix,
                                     std::string unix_socket)
    : options_(std::move(options)),
      url_prefix_(std::move(url_prefix)),
      unix_socket_(std::move(unix_socket)),
      handle_(curl_easy_init()) {}

CurlHttpTransport::~CurlHttpTransport() = default;

tl::expected<HttpResponse, TransportFailure> HttpTransport::download(const HttpRequest& request,
                                                                     const HttpDownload& download) {
  auto response = perform(request);
  if (!response || response->status < 200 || response->status >= 300) return response;
  if (!response->body.empty() &&
      !download.sink(HttpResponseHead{response->status, response->headers}, response->body)) {
    return tl::unexpected(TransportFailure{TransportClass::kUnknown, CURLE_WRITE_ERROR,
                                           "the download's sink stopped it"});
  }
  response->body.clear();
  return response;
}

tl::expected<HttpResponse, TransportFailure> CurlHttpTransport::perform(
    const HttpRequest& request) {
  return run(request, nullptr);
}

tl::expected<HttpResponse, TransportFailure> CurlHttpTransport::download(
    const HttpRequest& request, const HttpDownload& download) {
  return run(request, &download);
}

tl::expected<HttpResponse, TransportFailure> CurlHttpTransport::run(const HttpRequest& request,
                                                                    const HttpDownload* download) {
  std::lock_guard lock(mu_);
  CURL* curl = static_cast<CURL*>(handle_.get());
  // Reset clears the options but keeps the connection cache: keep-alive survives.
  curl_easy_reset(curl);
  std::string url = url_prefix_ + request.target;
  HttpResponse response;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  if (download != nullptr) {
    // A download lasts as long as it needs: what is bounded is a stall.
    const long stall_seconds =
        std::max<long>(1, static_cast<long>(options_.request_timeout.count() / 1000));
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, stall_seconds);
  } else {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  }
  BodySink sink{curl, &response.body, false, download, std::nullopt};
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, appendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  if (!unix_socket_.empty()) curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, unix_socket_.c_str());
  if (options_.ca_file) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file->c_str());
  if (options_.client_cert) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, options_.client_cert->c_str());
  }
  if (options_.client_key) curl_easy_setopt(curl, CURLOPT_SSLKEY, options_.client_key->c_str());

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add = [&](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (next) {
      (void)headers.release();
      headers.reset(next);
    }
  };
  // Without this, libcurl waits for "100 Continue" before sending larger bodies.
  add("Expect:");
  for (const auto& [name, value] : request.headers) add(name + ": " + value);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());

  BodySource source{&request.body, 0};
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    if (request.method != "POST") {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (request.method == "POST" || !request.body.empty()) {
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_READFUNCTION, readBody);
      curl_easy_setopt(curl, CURLOPT_READDATA, &source);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    }
  }

  CURLcode code = curl_easy_perform(curl);
  if (code != CURLE_OK) {
    curl_off_t connect_us = 0;
    curl_off_t pretransfer_us = 0;
    long request_size = 0;
    curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect_us);
    curl_easy_getinfo(curl, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);
    curl_easy_getinfo(curl, CURLINFO_REQUEST_SIZE, &request_size);
    bool connected = connect_us > 0 || pretransfer_us > 0;
    TransportFailure failure;
    failure.curl_code = static_cast<int>(code);
    failure.transport = classifyCurlFailure(code, connected, request_size);
    failure.message = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    return tl::unexpected(std::move(failure));
  }
  if (response.body.capacity() < response.body.size() + kBodyPadding) {
    response.body.reserve(response.body.size() + kBodyPadding);  // an empty body
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  char* content_type = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type);
  if (content_type) response.content_type = content_type;
  // The headers were kept already when a body came (at its first byte).
  if (download != nullptr) {
    response.headers =
        sink.head ? std::move(sink.head->headers) : keptHeaders(curl, download->keep_headers);
  }
  return response;
}

std::string HttpResponseHead::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

}  // namespace tuneplane::http
