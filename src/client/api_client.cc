#include "client/api_client.h"

#include <curl/curl.h>

#include <utility>

#include <fmt/format.h>

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

ApiResult<Json> ApiClient::call(std::string method, std::string target, std::string body,
                                std::string content_type) {
  http::HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  request.body = std::move(body);
  request.headers.emplace_back("Accept", "application/json");
  request.headers.emplace_back("User-Agent", kUserAgent);
  if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
  if (token_) request.headers.emplace_back("Authorization", "Bearer " + *token_);
  const std::string what = request.method + " " + request.target;

  auto response = transport_->perform(request);
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

  Json json = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  const bool is_json = !json.is_discarded();
  if (response->status >= 200 && response->status < 300) {
    if (is_json && json.is_object()) return json;
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

  ApiError error{FailureKind::kHttp, response->status, is_json ? serverErrors(json) : Errors{}};
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

ApiResult<Json> ApiClient::submitJob(std::string_view spec_text) {
  return call("POST", "/v1/jobs", std::string(spec_text), specContentType(spec_text));
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

}  // namespace tuneplane::client
