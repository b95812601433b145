#include "client/api_client.h"

#include <curl/curl.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "common/idempotency_key.h"

namespace tuneplane::client {
namespace {

constexpr const char* kUserAgent = "tuneplane-cli/0.1.0";
constexpr size_t kBodyExcerpt = 200;  // of a non-JSON error body, in a message

// The server's {"errors": [{code, field, message}, …]}; empty when the body is not that.
Errors serverErrors(const Json& body) {
  Errors errors;
  if (!body.is_object() || !body.contains("errors") || !body["errors"].is_array()) return errors;
  for (const Json& e : body["errors"]) {
    if (!e.is_object()) continue;
    auto text = [&e](const char* key) {
      return e.contains(key) && e[key].is_string() ? e[key].get<std::string>() : std::string();
    };
    Error error{text("code"), text("field"), text("message")};
    if (error.code.empty()) error.code = kErrHttp;
    errors.push_back(std::move(error));
  }
  return errors;
}

std::string excerpt(const std::string& body) {
  std::string out = body.substr(0, kBodyExcerpt);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return body.size() > kBodyExcerpt ? out + "…" : out;
}

}  // namespace

std::string escapeUriComponent(std::string_view text) {
  // libcurl accepts a null handle here since 7.82; it keeps A-Z a-z 0-9 - . _ ~.
  char* escaped = curl_easy_escape(nullptr, text.data(), static_cast<int>(text.size()));
  if (escaped == nullptr) return {};
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

std::string specContentType(std::string_view spec_text) {
  const auto first = spec_text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && spec_text[first] == '{') return "application/json";
  return "application/yaml";
}

ApiClient::ApiClient(std::unique_ptr<http::HttpTransport> transport,
                     std::optional<std::string> token)
    : transport_(std::move(transport)), token_(std::move(token)) {}

Result<std::unique_ptr<ApiClient>> ApiClient::connect(const ClientConfig& config,
                                                      ClientTimeouts timeouts) {
  http::HttpOptions options;
  options.base_url = config.server;
  options.ca_file = config.ca_file;
  options.connect_timeout = timeouts.connect;
  options.request_timeout = timeouts.request;
  auto transport = http::CurlHttpTransport::create(std::move(options));
  if (!transport) {
    return fail("cli.invalid_server", config.server_source, transport.error().message);
  }
  return std::make_unique<ApiClient>(std::move(*transport), config.token);
}

std::string ApiClient::redact(std::string text) const {
  if (!token_ || token_->empty()) return text;
  for (size_t at = text.find(*token_); at != std::string::npos; at = text.find(*token_, at + 10)) {
    text.replace(at, token_->size(), "<redacted>");
  }
  return text;
}

ApiResult<http::HttpResponse> ApiClient::exchange(http::HttpRequest request,
                                                  const http::HttpDownload* download) {
  request.headers.emplace_back("User-Agent", kUserAgent);
  if (token_) request.headers.emplace_back("Authorization", "Bearer " + *token_);
  const std::string what = request.method + " " + request.target;

  auto response =
      download ? transport_->download(request, *download) : transport_->perform(request);
  if (!response) {
    const http::TransportFailure& f = response.error();
    ApiError error;
    if (f.transport == http::TransportClass::kNotSent) {
      error.kind = FailureKind::kNotSent;
      // The server's certificate did not verify: say what fixes it.
      const bool unverified =
          f.curl_code == CURLE_PEER_FAILED_VERIFICATION || f.curl_code == CURLE_SSL_CACERT_BADFILE;
      error.errors.push_back(
          {unverified ? kErrUntrusted : kErrUnreachable, "",
           redact(fmt::format("cannot reach the server: {}{}", f.message,
                              unverified ? fmt::format("; the server's certificate is not "
                                                       "trusted: set {} to its CA's PEM file",
                                                       kCaFileEnv)
                                         : ""))});
    } else {
      error.kind = FailureKind::kNoAnswer;
      error.errors.push_back(
          {kErrNoAnswer, "",
           redact(fmt::format("{}: no answer from the server ({}); the request may have been "
                              "carried out",
                              what, f.message))});
    }
    return tl::unexpected(std::move(error));
  }
  if (response->status >= 200 && response->status < 300) return std::move(*response);

  const Json json = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  ApiError error{FailureKind::kHttp, response->status,
                 json.is_discarded() ? Errors{} : serverErrors(json)};
  if (error.errors.empty()) {
    error.errors.push_back(
        {kErrHttp, "",
         fmt::format("{}: HTTP {} from the server{}", what, response->status,
                     response->body.empty() ? "" : ": " + excerpt(response->body))});
  }
  for (Error& e : error.errors) {
    e.field = redact(std::move(e.field));
    e.message = redact(std::move(e.message));
  }
  return tl::unexpected(std::move(error));
}

ApiResult<Json> ApiClient::call(std::string method, std::string target, std::string body,
                                std::string content_type,
                                std::vector<std::pair<std::string, std::string>> headers) {
  http::HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  request.body = std::move(body);
  request.headers = std::move(headers);
  request.headers.emplace_back("Accept", "application/json");
  if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
  const std::string what = request.method + " " + request.target;
  auto response = exchange(std::move(request));
  if (!response) return tl::unexpected(std::move(response.error()));
  Json json = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded() && json.is_object()) return json;
  ApiError error{FailureKind::kBadResponse, response->status, {}};
  error.errors.push_back(
      {kErrBadResponse, "",
       redact(fmt::format(
           "{}: the answer (HTTP {}, {}) is not a JSON object; is the server a "
           "TunePlane server?",
           what, response->status,
           response->content_type.empty() ? "no content type" : response->content_type))});
  return tl::unexpected(std::move(error));
}

ApiResult<Json> ApiClient::submitJob(std::string_view spec_text,
                                     const std::string& idempotency_key) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (!idempotency_key.empty()) headers.emplace_back(kIdempotencyKeyHeader, idempotency_key);
  return call("POST", "/v1/jobs", std::string(spec_text), specContentType(spec_text),
              std::move(headers));
}

ApiResult<Json> ApiClient::uploadWorkdir(std::string archive) {
  return call("POST", "/v1/workdirs", std::move(archive), "application/x-tar");
}

ApiResult<Json> ApiClient::validateSpec(std::string_view spec_text) {
  return call("POST", "/v1/validate", std::string(spec_text), specContentType(spec_text));
}

ApiResult<Json> ApiClient::capabilities() {
  return call("GET", "/v1/capabilities");
}

ApiResult<Json> ApiClient::listJobs(const ListQuery& query) {
  std::string target = "/v1/jobs";
  char separator = '?';
  auto add = [&](std::string_view key, std::string_view value) {
    target += fmt::format("{}{}={}", separator, key, escapeUriComponent(value));
    separator = '&';
  };
  if (query.phase) add("phase", *query.phase);
  if (query.name) add("name", *query.name);
  if (query.owner) add("owner", *query.owner);
  for (const std::string& label : query.labels) add("label", label);
  if (query.limit) add("limit", std::to_string(*query.limit));
  if (query.continue_token) add("continue", *query.continue_token);
  return call("GET", target);
}

ApiResult<Json> ApiClient::getJob(std::string_view id) {
  return call("GET", "/v1/jobs/" + escapeUriComponent(id));
}

ApiResult<Json> ApiClient::jobEvents(std::string_view id) {
  return call("GET", "/v1/jobs/" + escapeUriComponent(id) + "/events");
}

ApiResult<Json> ApiClient::jobLogs(std::string_view id, const LogsQuery& query) {
  std::string target = "/v1/jobs/" + escapeUriComponent(id) + "/logs";
  target += query.stderr_stream ? "?stream=stderr" : "?stream=stdout";
  if (query.attempt) target += fmt::format("&attempt={}", *query.attempt);
  if (query.component) target += "&component=" + escapeUriComponent(*query.component);
  return call("GET", target);
}

ApiResult<Json> ApiClient::cancelJob(std::string_view id) {
  return call("POST", "/v1/jobs/" + escapeUriComponent(id) + "/cancel", "{}", "application/json");
}

ApiResult<Json> ApiClient::abandonAttempt(std::string_view id, int attempt,
                                          std::string_view reason) {
  const Json body = {{"reason", std::string(reason)}};
  return call("POST",
              fmt::format("/v1/jobs/{}/attempts/{}/abandon", escapeUriComponent(id), attempt),
              body.dump(), "application/json");
}

ApiResult<Json> ApiClient::whoami() {
  return call("GET", "/v1/whoami");
}

ApiResult<Json> ApiClient::usage(const UsageQuery& query) {
  std::string target = "/v1/usage";
  char separator = '?';
  auto add = [&](std::string_view key, std::string_view value) {
    target += fmt::format("{}{}={}", separator, key, escapeUriComponent(value));
    separator = '&';
  };
  if (query.by) add("by", *query.by);
  if (query.since) add("since", *query.since);
  if (query.until) add("until", *query.until);
  for (const std::string& user : query.users) add("user", user);
  return call("GET", target);
}

}  // namespace tuneplane::client

namespace tuneplane::client {
namespace {

// The query of a file route: area, attempt, path (the server's defaults when unset).
std::string fileTarget(std::string_view id, std::string_view route, const FileLocation& where) {
  std::string target = "/v1/jobs/" + escapeUriComponent(id) + std::string(route);
  target += "?area=" + escapeUriComponent(where.area);
  if (where.attempt) target += fmt::format("&attempt={}", *where.attempt);
  if (!where.path.empty()) target += "&path=" + escapeUriComponent(where.path);
  return target;
}

// "bytes 100-199/1000" → {100, 1000}.
std::optional<std::pair<uint64_t, uint64_t>> parseContentRange(const std::string& text) {
  unsigned long long first = 0, last = 0, total = 0;
  if (std::sscanf(text.c_str(), "bytes %llu-%llu/%llu", &first, &last, &total) != 3) {
    return std::nullopt;
  }
  return std::make_pair(static_cast<uint64_t>(first), static_cast<uint64_t>(total));
}

}  // namespace

ApiResult<Json> ApiClient::listFiles(std::string_view id, const FileLocation& where,
                                     const FilesPage& page) {
  std::string target = fileTarget(id, "/files", where);
  if (page.limit) target += fmt::format("&limit={}", *page.limit);
  if (!page.continue_token.empty())
    target += "&continue=" + escapeUriComponent(page.continue_token);
  return call("GET", target);
}

ApiResult<DownloadHead> ApiClient::downloadFile(std::string_view id, const FileLocation& where,
                                                uint64_t offset, const std::string& if_range,
                                                const DownloadSink& sink) {
  http::HttpRequest request;
  request.method = "GET";
  request.target = fileTarget(id, "/files/content", where);
  request.headers.emplace_back("Accept", "application/octet-stream, application/json");
  if (offset > 0) {
    request.headers.emplace_back("Range", fmt::format("bytes={}-", offset));
    if (!if_range.empty()) request.headers.emplace_back("If-Range", if_range);
  }
  http::HttpDownload download;
  download.keep_headers = {"ETag", "Content-Range", "Content-Length"};
  std::optional<DownloadHead> head;
  const auto headOf = [](int status, const auto& headers) -> std::optional<DownloadHead> {
    DownloadHead out;
    out.status = status;
    out.etag = headers("ETag");
    if (status == 206) {
      auto range = parseContentRange(headers("Content-Range"));
      if (!range) return std::nullopt;
      out.offset = range->first;
      out.total = range->second;
    } else {
      out.total = std::strtoull(headers("Content-Length").c_str(), nullptr, 10);
    }
    return out;
  };
  bool bad_head = false;
  download.sink = [&](const http::HttpResponseHead& h, std::string_view chunk) {
    if (!head) {
      head = headOf(h.status, [&h](std::string_view name) { return h.header(name); });
      if (!head) {
        bad_head = true;
        return false;
      }
    }
    return sink(*head, chunk);
  };
  const std::string what = "GET " + request.target;
  auto response = exchange(std::move(request), &download);
  if (bad_head) {
    ApiError error{FailureKind::kBadResponse, 206, {}};
    error.errors.push_back({kErrBadResponse, "Content-Range",
                            what + ": a partial answer without a usable Content-Range"});
    return tl::unexpected(std::move(error));
  }
  if (!response) return tl::unexpected(std::move(response.error()));
  if (!head) {  // an empty body: the sink was never called
    const auto header = [&](std::string_view name) {
      for (const auto& [key, value] : response->headers) {
        if (key == name) return value;
      }
      return std::string();
    };
    head = headOf(response->status, header);
    if (!head)
      return tl::unexpected(ApiError{FailureKind::kBadResponse,
                                     response->status,
                                     {{kErrBadResponse, "Content-Range",
                                       what + ": a partial answer without a usable "
                                              "Content-Range"}}});
  }
  return *head;
}

}  // namespace tuneplane::client
