// See http_transport.h. The only translation unit of the project that includes Boost.Beast
// and Boost.Asio: they are header-only and heavy to compile.
#include "api/http_transport.h"
#include "api/connection_limits.h"
#include "api/error_codes.h"
#include "api/network_ranges.h"

#include <openssl/ssl.h>

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace tuneplane::api {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

// Two I/O threads: every socket operation is asynchronous, so they only parse and copy
// (and do TLS handshakes); the handlers run on the worker pool.
constexpr int kIoThreads = 2;
// How long a refused connection's unread input is drained before the socket closes, so the
// client reads the refusal instead of a reset.
constexpr std::chrono::seconds kLinger{2};
// The first read of a request: its bytes go into the connection's buffer.
constexpr std::size_t kFirstRead = 4096;
// After an accept() error (e.g. out of descriptors): wait before accepting again.
constexpr std::chrono::milliseconds kAcceptBackoff{50};

Result<std::shared_ptr<ssl::context>> loadTlsContext(const TlsFiles& files) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  boost::system::error_code ec;
  context->use_certificate_chain_file(files.cert, ec);
  if (ec) {
    return fail("api.tls", "server.tls.cert",
                "cannot load the certificate chain " + files.cert + ": " + ec.message());
  }
  context->use_private_key_file(files.key, ssl::context::pem, ec);
  if (ec) {
    return fail("api.tls", "server.tls.key",
                "cannot load the private key " + files.key + ": " + ec.message());
  }
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return fail("api.tls", "server.tls.key", "the private key does not match the certificate");
  }
  return context;
}

std::string serialize(const HttpResponse& answer) {
  http::response<http::string_body> res{static_cast<http::status>(answer.status), 11};
  for (const auto& [name, value] : answer.headers) res.insert(name, value);
  res.body() = answer.body;
  res.keep_alive(false);
  res.prepare_payload();
  std::ostringstream out;
  out << res;
  return out.str();
}

}  // namespace

class HttpServerTransport::Impl {
 public:
  Impl(HttpServerOptions options, Handler handler, RefusalHandler refusal)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        refusal_(std::move(refusal)),
        limits_(options_.max_connections, options_.max_connections_per_client,
                options_.client_ipv6_prefix),
        workers_(static_cast<std::size_t>(options_.threads)),
        acceptor_(io_),
        backoff_(io_) {}

  Status listen() {
    if (options_.tls) {
      auto context = loadTlsContext(*options_.tls);
      if (!context) return tl::unexpected(context.error());
      tls_ = std::move(*context);
      tls_files_ = *options_.tls;
    }
    const auto fail_listen = [this](const std::string& why) {
      return fail(codes::kListen, "listen",
                  "cannot listen on " + options_.listen.host + ":" +
                      std::to_string(options_.listen.port) + " (" + why + ")");
    };
    boost::system::error_code ec;
    auto address = net::ip::make_address(
        options_.listen.host == "localhost" ? std::string("127.0.0.1") : options_.listen.host, ec);
    if (ec) return fail_listen("not an IP address");
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(options_.listen.port));
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) return fail_listen("in use, or not an address of this host");
    port_ = acceptor_.local_endpoint().port();
    accept();
    for (int i = 0; i < kIoThreads; ++i) io_threads_.emplace_back([this] { io_.run(); });
    return {};
  }

  void stop() {
    if (stopped_.exchange(true)) return;
    // No more I/O; a handler already running finishes (its store write completes), then the
    // pending operations (and with them the connections) are destroyed with io_.
    io_.stop();
    for (auto& t : io_threads_) t.join();
    workers_.join();
  }

  int port() const { return port_; }
  bool tls() const { return options_.tls.has_value(); }

  Status reloadTls(const std::optional<TlsFiles>& files) {
    if (!options_.tls || !files) {
      if (!options_.tls && !files) return {};  // plain HTTP before and after: nothing to do
      return fail("api.no_tls", "server.tls",
                  options_.tls ? "removing server.tls takes a restart (serve listens over HTTPS)"
                               : "adding server.tls takes a restart (serve listens over HTTP)");
    }
    auto context = loadTlsContext(*files);
    if (!context) return tl::unexpected(context.error());
    std::lock_guard<std::mutex> lock(tls_mu_);
    tls_ = std::move(*context);
    tls_files_ = *files;
    return {};
  }

  std::optional<TlsFiles> tlsFiles() {
    std::lock_guard<std::mutex> lock(tls_mu_);
    if (!options_.tls) return std::nullopt;
    return tls_files_;
  }

  std::shared_ptr<ssl::context> currentTls() {
    std::lock_guard<std::mutex> lock(tls_mu_);
    return tls_;
  }

  const HttpServerOptions& options() const { return options_; }
  ConnectionLimits& limits() { return limits_; }
  net::thread_pool& workers() { return workers_; }
  HttpResponse handle(HttpRequest& request) {
    try {
      return handler_(request);
    } catch (const std::exception&) {
      return refusal_(TransportRefusal::kBadRequest, request);
    }
  }
  HttpResponse refuse(TransportRefusal why, const HttpRequest& request) {
    return refusal_(why, request);
  }

 private:
  void accept();
  void refuseConnection(tcp::socket socket);

  HttpServerOptions options_;
  Handler handler_;
  RefusalHandler refusal_;
  ConnectionLimits limits_;
  std::mutex tls_mu_;
  std::shared_ptr<ssl::context> tls_;
  TlsFiles tls_files_;  // what tls_ was loaded from
  std::atomic<bool> stopped_{false};
  int port_ = 0;
  std::vector<std::thread> io_threads_;
  net::thread_pool workers_;
  // Last: destroyed first, and with it every connection (they use the members above).
  net::io_context io_{kIoThreads};
  tcp::acceptor acceptor_;
  net::steady_timer backoff_;
};

namespace {

beast::tcp_stream& lowest(beast::tcp_stream& stream) {
  return stream;
}
beast::tcp_stream& lowest(beast::ssl_stream<beast::tcp_stream>& stream) {
  return beast::get_lowest_layer(stream);
}

// One connection. Stream is beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>.
// Every callback runs on the connection's strand; one request is in flight at a time, so
// pipelined requests are answered in order.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  // `proxy`: the peer is a trusted proxy (its connection counts in the total only; each
  // request counts for the client it forwards).
  Session(HttpServerTransport::Impl& transport, Stream stream, std::string address, int port,
          bool proxy, std::shared_ptr<ssl::context> tls)
      : transport_(transport),
        tls_(std::move(tls)),
        stream_(std::move(stream)),
        address_(std::move(address)),
        port_(port),
        proxy_(proxy) {}
  ~Session() {
    releaseClient();
    if (proxy_) {
      transport_.limits().releaseProxy();
    } else {
      transport_.limits().release(address_);
    }
  }

  void run() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      waitForRequest();
    } else {
      lowest(stream_).expires_after(transport_.options().request_timeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->close();
                                self->waitForRequest();
                              });
    }
  }

 private:
  // Idle until a request's first byte (idle_timeout), unless pipelined bytes are waiting.
  void waitForRequest() {
    if (buffer_.size() > 0) return readRequest();
    lowest(stream_).expires_after(transport_.options().idle_timeout);
    stream_.async_read_some(buffer_.prepare(kFirstRead),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->close();
                              self->buffer_.commit(n);
                              self->readRequest();
                            });
  }

  // The rest of the request, headers and body, under one deadline from its first byte.
  void readRequest() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(transport_.options().max_header_bytes));
    parser_->body_limit(transport_.options().max_body_bytes);
    lowest(stream_).expires_after(transport_.options().request_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->onRead(ec);
                              if (!self->attributeClient()) {
                                return self->refuse(TransportRefusal::kOverloaded);
                              }
                              self->widenUploadLimit();
                              self->continueIfAsked();
                            });
  }

  // A code folder's upload (kWorkdirUploadPath) may be larger than any other body: its own
  // limit, from the folder limits, once its headers say it is one.
  void widenUploadLimit() {
    const auto& req = parser_->get();
    if (req.method() != http::verb::post) return;
    const auto raw = req.target();
    std::string_view target(raw.data(), raw.size());
    target = target.substr(0, target.find('?'));
    if (target != kWorkdirUploadPath) return;
    const std::size_t limit = workdirBodyLimit(transport_.options().workdir);
    if (limit > transport_.options().max_body_bytes) parser_->body_limit(limit);
  }

  // Behind a trusted proxy: the request counts for the client its X-Forwarded-For names,
  // from its headers until its answer is written. False: that client is over its cap.
  bool attributeClient() {
    if (!proxy_) return true;
    std::vector<std::string> forwarded;
    for (const auto& field : parser_->get()) {
      if (beast::iequals(field.name_string(), "X-Forwarded-For")) {
        forwarded.emplace_back(field.value());
      }
    }
    ClientAddress client = clientAddress(address_, forwarded, transport_.options().trusted_proxies);
    releaseClient();  // never two shares at once, whatever path ended the last request
    if (!transport_.limits().admitForwarded(client.address)) {
      client_ = std::move(client.address);  // named in the refusal's access log line
      return false;
    }
    client_ = std::move(client.address);
    holding_client_ = true;
    return true;
  }

  void releaseClient() {
    if (!holding_client_) return;
    holding_client_ = false;
    transport_.limits().releaseForwarded(client_);
  }

  // The one end of every request, whole or streamed: a forwarded client's share goes back
  // before the connection waits for the next request (which may be another client's). A
  // streamed download that skipped this kept the share for good (issue 45).
  void requestAnswered() {
    releaseClient();
    client_.clear();
  }

  // A client that sent `Expect: 100-continue` (curl does for bodies over 1 KiB) waits for
  // this before it sends the body; the deadline still runs.
  void continueIfAsked() {
    const auto& req = parser_->get();
    if (parser_->is_done() || !beast::iequals(req[http::field::expect], "100-continue")) {
      return readBody();
    }
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->close();
                       self->readBody();
                     });
  }

  void readBody() {
    if (parser_->is_done()) return onRead({});
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    if (ec == http::error::body_limit) return refuse(TransportRefusal::kBodyTooLarge);
    if (ec == http::error::header_limit) return refuse(TransportRefusal::kHeaderTooLarge);
    if (ec && ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return refuse(TransportRefusal::kBadRequest);
    }
    if (ec) return close();  // the client left, or the deadline passed: no one to answer

    auto& req = parser_->get();
    auto request = std::make_shared<HttpRequest>(partialRequest());
    request->body = std::move(req.body());
    const bool keep_alive = req.keep_alive();
    parser_.reset();
    // The handler may block (fsync, doctor's checks): never on an I/O thread.
    net::post(transport_.workers(), [self = this->shared_from_this(), request, keep_alive] {
      auto answer = std::make_shared<HttpResponse>(self->transport_.handle(*request));
      net::dispatch(self->stream_.get_executor(),
                    [self, answer, keep_alive] { self->write(std::move(*answer), keep_alive); });
    });
  }

  // What the parser has of the request (its headers once they are complete).
  HttpRequest partialRequest() const {
    HttpRequest request;
    request.remote_addr = client_.empty() ? address_ : client_;
    request.remote_port = client_.empty() ? port_ : 0;
    if (proxy_) request.proxy_addr = address_;
    if (!parser_ || !parser_->is_header_done()) return request;
    const auto& req = parser_->get();
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    for (const auto& field : req) {
      request.headers.emplace(std::string(field.name_string()), std::string(field.value()));
    }
    return request;
  }

  void refuse(TransportRefusal why) {
    write(transport_.refuse(why, partialRequest()), /*keep_alive=*/false);
  }

  void write(HttpResponse answer, bool keep_alive) {
    if (answer.stream && !answer.head) return writeStreamed(std::move(answer), keep_alive);
    response_ = {static_cast<http::status>(answer.status), 11};
    for (auto& [name, value] : answer.headers) response_.insert(name, value);
    response_.keep_alive(keep_alive);
    if (answer.head) {
      response_.content_length(answer.stream ? answer.stream_length : answer.body.size());
    } else {
      response_.body() = std::move(answer.body);
      response_.prepare_payload();
    }
    lowest(stream_).expires_after(transport_.options().request_timeout);
    http::async_write(
        stream_, response_,
        [self = this->shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
          self->response_ = {};
          self->requestAnswered();
          if (ec) return self->close();
          if (!keep_alive) return self->linger();
          self->waitForRequest();
        });
  }

  // A streamed answer (body_stream.h): the header, then one chunk at a time — read on the
  // worker pool (a slow filesystem blocks no I/O thread), written here under its own
  // deadline — so the connection holds one chunk buffer, never the body.
  void writeStreamed(HttpResponse answer, bool keep_alive) {
    streamed_header_ = {static_cast<http::status>(answer.status), 11};
    for (auto& [name, value] : answer.headers) streamed_header_.insert(name, value);
    streamed_header_.keep_alive(keep_alive);
    streamed_header_.content_length(answer.stream_length);
    header_serializer_.emplace(streamed_header_);
    body_ = std::move(answer.stream);
    remaining_ = answer.stream_length;
    lowest(stream_).expires_after(transport_.options().request_timeout);
    http::async_write_header(
        stream_, *header_serializer_,
        [self = this->shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
          if (ec) return self->close();
          self->nextChunk(keep_alive);
        });
  }

  void nextChunk(bool keep_alive) {
    if (remaining_ == 0) {
      endStream();
      requestAnswered();
      if (!keep_alive) return linger();
      return waitForRequest();
    }
    if (!chunk_) chunk_ = std::make_unique<char[]>(kStreamChunkBytes);
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, kStreamChunkBytes));
    net::post(transport_.workers(), [self = this->shared_from_this(), body = body_,
                                     buffer = chunk_.get(), want, keep_alive] {
      auto got = body->read(buffer, want);
      const std::size_t n = got ? std::min(*got, want) : 0;
      net::dispatch(self->stream_.get_executor(), [self, n, keep_alive] {
        // The body ended early or failed: the promised length cannot be kept.
        if (n == 0) return self->close();
        self->remaining_ -= n;
        lowest(self->stream_).expires_after(self->transport_.options().request_timeout);
        net::async_write(self->stream_, net::buffer(self->chunk_.get(), n),
                         [self, keep_alive](beast::error_code ec, std::size_t) {
                           if (ec) return self->close();
                           self->nextChunk(keep_alive);
                         });
      });
    });
  }

  void endStream() {
    body_.reset();  // the file's descriptor
    chunk_.reset();
    header_serializer_.reset();
    streamed_header_ = {};
  }

  // After a final answer: stop sending, read and drop what the client still sends (bounded
  // by kLinger), then close, so the client sees the answer rather than a reset.
  void linger() {
    beast::error_code ignored;
    lowest(stream_).socket().shutdown(tcp::socket::shutdown_send, ignored);
    lowest(stream_).expires_after(kLinger);
    drain();
  }
  void drain() {
    lowest(stream_).async_read_some(net::buffer(scratch_), [self = this->shared_from_this()](
                                                               beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->drain();
    });
  }

  void close() {
    endStream();
    beast::error_code ignored;
    lowest(stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest(stream_).close();
  }

  HttpServerTransport::Impl& transport_;
  std::shared_ptr<ssl::context> tls_;  // the context stream_ uses: outlives it (declared first)
  Stream stream_;
  std::string address_;  // the peer
  int port_;
  const bool proxy_;
  std::string client_;  // behind a proxy: the current request's client ("" between requests)
  bool holding_client_ = false;  // client_ holds a share of the per-client cap
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  // A streamed answer in progress (writeStreamed).
  http::response<http::empty_body> streamed_header_;
  std::optional<http::response_serializer<http::empty_body>> header_serializer_;
  std::shared_ptr<BodyStream> body_;
  std::uint64_t remaining_ = 0;
  std::unique_ptr<char[]> chunk_;
  std::array<char, 1024> scratch_{};
};

}  // namespace

void HttpServerTransport::Impl::accept() {
  acceptor_.async_accept(net::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;
    if (ec) {  // e.g. out of descriptors: try again shortly instead of spinning
      backoff_.expires_after(kAcceptBackoff);
      backoff_.async_wait([this](beast::error_code) { accept(); });
      return;
    }
    accept();
    beast::error_code ignored;
    const auto remote = socket.remote_endpoint(ignored);
    const std::string address = remote.address().to_string();
    const bool proxy = contains(options_.trusted_proxies, address);
    if (!(proxy ? limits_.admitProxy() : limits_.admit(address))) {
      return refuseConnection(std::move(socket));
    }
    socket.set_option(tcp::no_delay(true), ignored);
    if (auto context = currentTls()) {
      beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *context);
      std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
          *this, std::move(stream), address, remote.port(), proxy, std::move(context))
          ->run();
    } else {
      std::make_shared<Session<beast::tcp_stream>>(*this, beast::tcp_stream(std::move(socket)),
                                                   address, remote.port(), proxy, nullptr)
          ->run();
    }
  });
}

// Over a cap: a plain-HTTP client gets 503 at once; a TLS client cannot read one before a
// handshake (which would cost what the cap protects), so its connection is closed.
void HttpServerTransport::Impl::refuseConnection(tcp::socket socket) {
  if (options_.tls) {
    beast::error_code ignored;
    socket.close(ignored);
    return;
  }
  struct Refused {
    tcp::socket socket;
    std::string text;
  };
  HttpRequest none;
  auto refused = std::make_shared<Refused>(
      Refused{std::move(socket), serialize(refuse(TransportRefusal::kOverloaded, none))});
  net::async_write(refused->socket, net::buffer(refused->text),
                   [refused](beast::error_code, std::size_t) {
                     beast::error_code ignored;
                     refused->socket.shutdown(tcp::socket::shutdown_both, ignored);
                     refused->socket.close(ignored);
                   });
}

Result<std::unique_ptr<HttpServerTransport>> HttpServerTransport::start(HttpServerOptions options,
                                                                        Handler handler,
                                                                        RefusalHandler refusal) {
  auto impl = std::make_shared<Impl>(std::move(options), std::move(handler), std::move(refusal));
  if (auto listening = impl->listen(); !listening) return tl::unexpected(listening.error());
  return std::unique_ptr<HttpServerTransport>(new HttpServerTransport(std::move(impl)));
}

HttpServerTransport::HttpServerTransport(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServerTransport::~HttpServerTransport() {
  stop();
}

int HttpServerTransport::port() const {
  return impl_->port();
}

bool HttpServerTransport::tls() const {
  return impl_->tls();
}

Status HttpServerTransport::reloadTls(const std::optional<TlsFiles>& files) {
  return impl_->reloadTls(files);
}

std::optional<TlsFiles> HttpServerTransport::tlsFiles() const {
  return impl_->tlsFiles();
}

void HttpServerTransport::stop() {
  impl_->stop();
}

}  // namespace tuneplane::api
