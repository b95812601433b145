#include "slurm/rest_client.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "slurm/answer_decoder.h"

namespace tuneplane::slurm {
namespace {

// Answers are decoded where the transport left them: it keeps the padding the decoder needs.
static_assert(http::kBodyPadding >= kJsonPadding);

std::string lowercase(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Percent-encodes everything but RFC 3986 unreserved characters.
std::string encodePathSegment(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// Never let a credential through, whatever an upstream message contains.
std::string scrub(std::string text, const std::string& token) {
  if (token.empty()) return text;
  for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at)) {
    text.replace(at, token.size(), "<redacted>");
  }
  return text;
}

void scrubError(SlurmError& e, const std::string& token) {
  e.error.message = scrub(std::move(e.error.message), token);
  e.error.field = scrub(std::move(e.error.field), token);
  e.slurm_error = scrub(std::move(e.slurm_error), token);
  e.slurm_description = scrub(std::move(e.slurm_description), token);
}

bool mentionsAuth(const std::string& text) {
  return lowercase(text).find("authenticat") != std::string::npos;
}

// 401 (no token) and 511 (bad/expired token, error 1007) are the real server's answers; some
// releases answer 500 instead, so a 500 that speaks of authentication counts too. `/ping`
// answers 200 with every controller "responding: false, Protocol authentication error"
// (`pings_may_refuse`). A success answer is decoded by its operation, not searched for
// errors[] here: that would read a 50 MB job list twice.
bool isAuthFailure(const http::HttpResponse& response, bool pings_may_refuse) {
  if (response.status == 401 || response.status == 511) return true;
  if (response.status < 200 || response.status >= 300) {
    auto errors = decodeMessages(response.body, "errors");
    if (!errors) return response.status == 500 && mentionsAuth(response.body);
    for (const auto& m : *errors) {
      if (m.error_number == kSlurmAuthError) return true;
      if (response.status == 500 && (mentionsAuth(m.error) || mentionsAuth(m.description))) {
        return true;
      }
    }
    return false;
  }
  if (!pings_may_refuse || response.status != 200) return false;
  auto ping = decodePing(response.body);
  if (!ping || ping->controllers.empty()) return false;
  return std::all_of(
      ping->controllers.begin(), ping->controllers.end(),
      [](const ControllerPing& c) { return !c.responding && mentionsAuth(c.status); });
}

// Turns a non-success answer into a SlurmError carrying Slurm's first error.
SlurmError errorFromResponse(const char* op, const http::HttpResponse& response,
                             const std::string& token) {
  auto decoded = decodeMessages(response.body, "errors");
  std::vector<SlurmMessage> errors;
  if (decoded) errors = std::move(*decoded);
  SlurmError e;
  e.http_status = response.status;
  // A gateway that timed out or failed may have forwarded the request: outcome unknown.
  e.transport = (response.status == 502 || response.status == 504) ? TransportClass::kUnknown
                                                                   : TransportClass::kRejected;
  std::string code(response.status >= 500 ? kErrServerError : kErrRejected);
  std::string detail;
  if (!errors.empty()) {
    e.slurm_error_number = errors.front().error_number;
    e.slurm_error = errors.front().error;
    e.slurm_description = errors.front().description;
    detail = errors.front().error;
    if (!errors.front().description.empty()) detail += " — " + errors.front().description;
    if (e.slurm_error_number == kSlurmInvalidJobId) code = kErrJobNotFound;
    // slurmrestd answers these with 502 too, but they say that slurmctld never took the
    // request: nothing was done, whatever the method.
    if (neverReachedController(e.slurm_error_number)) e.transport = TransportClass::kRejected;
  } else if (!decoded && !response.body.empty() && response.body.size() < 200) {
    detail = response.body;  // a short text answer, e.g. "Authentication failure"
  }
  // Only Slurm's own error number says a job does not exist. A 404 without it is not
  // Slurm's word: a misrouted proxy or a gateway answers so, and it proves nothing.
  if (e.transport == TransportClass::kUnknown) code = kErrOutcomeUnknown;
  std::string message = fmt::format("slurmrestd answered HTTP {}", response.status);
  if (!detail.empty()) message += ": " + detail;
  e.error = Error{code, op, scrub(message, token)};
  return e;
}

SlurmError badResponse(const char* op, const http::HttpResponse& response, const Error& why,
                       TransportClass transport) {
  SlurmError e = makeSlurmError(kErrBadResponse, op,
                                fmt::format("cannot decode the answer (HTTP {}): {}: {}",
                                            response.status, why.field, why.message),
                                transport);
  e.http_status = response.status;
  return e;
}

bool isSuccess(int status) {
  return status >= 200 && status < 300;
}

}  // namespace

std::chrono::milliseconds backoffDelay(const RetryPolicy& policy, int retry, double random01) {
  double cap = static_cast<double>(policy.initial_backoff.count());
  for (int i = 0; i < retry && cap < static_cast<double>(policy.max_backoff.count()); ++i) {
    cap *= 2;
  }
  cap = std::min(cap, static_cast<double>(policy.max_backoff.count()));
  random01 = std::clamp(random01, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(cap / 2 + random01 * cap / 2));
}

RestClientOptions restClientOptionsFromSite(const catalog::SlurmSite& site) {
  RestClientOptions options;
  options.http.base_url = site.url;
  options.http.ca_file = site.ca_file;
  options.http.client_cert = site.client_cert;
  options.http.client_key = site.client_key;
  options.http.connect_timeout = site.connect_timeout;
  options.http.request_timeout = site.request_timeout;
  options.api_version = site.api_version;
  options.user = site.user;
  return options;
}

SlurmRestClient::SlurmRestClient(RestClientOptions options,
                                 std::unique_ptr<http::HttpTransport> transport,
                                 std::unique_ptr<TokenProvider> tokens)
    : options_(std::move(options)), transport_(std::move(transport)), tokens_(std::move(tokens)) {
  if (!options_.random) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    auto mu = std::make_shared<std::mutex>();
    options_.random = [engine, mu] {
      std::lock_guard lock(*mu);
      return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
    };
  }
  if (!options_.sleep) {
    options_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }
  if (options_.retry.max_attempts < 1) options_.retry.max_attempts = 1;
}

Result<std::unique_ptr<SlurmRestClient>> SlurmRestClient::create(
    RestClientOptions options, std::unique_ptr<TokenProvider> tokens) {
  auto transport = http::CurlHttpTransport::create(options.http);
  if (!transport) return fail(std::string(kErrConfig), "slurm.url", transport.error().message);
  return std::make_unique<SlurmRestClient>(std::move(options), std::move(*transport),
                                           std::move(tokens));
}

Result<std::unique_ptr<SlurmRestClient>> SlurmRestClient::fromSite(const catalog::SlurmSite& site,
                                                                   UnixClock clock) {
  if (site.api_version != "v0.0.45") {
    return fail("slurm.config", "slurm.api_version", "only v0.0.45 is supported");
  }
  auto tokens = makeTokenProvider(site, std::move(clock));
  if (!tokens) return tl::unexpected(tokens.error());
  return create(restClientOptionsFromSite(site), std::move(*tokens));
}

std::string SlurmRestClient::route(const std::string& suffix) const {
  return "/slurm/" + options_.api_version + suffix;
}

SlurmResult<SlurmRestClient::Exchange> SlurmRestClient::call(const char* op,
                                                             const std::string& method,
                                                             const std::string& path,
                                                             const std::string& body,
                                                             RetryMode mode) {
  bool refreshed = false;
  int attempt = 0;
  int sent = 0;  // requests performed: SlurmError::attempts
  auto backoff = [&](const std::string& why) {
    auto delay = backoffDelay(options_.retry, attempt, options_.random());
    ++attempt;
    spdlog::warn("slurm {}: {}; retry {} of {} in {} ms", op, why, attempt,
                 options_.retry.max_attempts - 1, delay.count());
    options_.sleep(delay);
  };
  for (;;) {
    auto token = tokens_->token();
    if (!token) {
      SlurmError e = makeSlurmError(kErrTokenUnavailable, op, token.error().describe(),
                                    TransportClass::kNotSent);
      return slurmFail(std::move(e));
    }
    http::HttpRequest request{method, path, {}, body};
    request.headers.emplace_back("Accept", "application/json");
    if (!body.empty()) request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("X-SLURM-USER-TOKEN", *token);
    if (!options_.user.empty()) request.headers.emplace_back("X-SLURM-USER-NAME", options_.user);

    auto result = transport_->perform(request);
    ++sent;
    if (!result) {
      const http::TransportFailure& failure = result.error();
      bool can_retry =
          attempt + 1 < options_.retry.max_attempts &&
          (mode == RetryMode::kReads ||
           (mode == RetryMode::kNotSentOnly && failure.transport == TransportClass::kNotSent));
      std::string why = fmt::format("transport {} ({})", toString(failure.transport),
                                    scrub(failure.message, *token));
      if (can_retry) {
        backoff(why);
        continue;
      }
      auto code = failure.transport == TransportClass::kNotSent ? kErrNotSent : kErrOutcomeUnknown;
      std::string message =
          failure.transport == TransportClass::kNotSent
              ? "the request never reached slurmrestd: " + scrub(failure.message, *token)
              : "no answer from slurmrestd; the request may have been acted on: " +
                    scrub(failure.message, *token);
      SlurmError e = makeSlurmError(code, op, std::move(message), failure.transport);
      e.curl_code = failure.curl_code;
      e.attempts = sent;
      return slurmFail(std::move(e));
    }
    Exchange exchange{std::move(*result), {}};
    if (isAuthFailure(exchange.response, path == route("/ping/"))) {
      if (!refreshed) {
        // Safe even for a submit: slurmrestd checks the token before it acts on anything,
        // so a refused token means nothing was done.
        refreshed = true;
        tokens_->invalidate();
        spdlog::info("slurm {}: token refused (HTTP {}); refreshing it once", op,
                     exchange.response.status);
        continue;
      }
      SlurmError e = errorFromResponse(op, exchange.response, *token);
      e.transport = TransportClass::kRejected;
      e.error.code = std::string(kErrAuthFailed);
      e.error.message =
          "slurmrestd refused the token even after a refresh (check the token file or JWT key "
          "and the user): " +
          e.error.message;
      scrubError(e, *token);
      e.attempts = sent;
      return slurmFail(std::move(e));
    }
    if (exchange.response.status >= 500 && mode == RetryMode::kReads &&
        attempt + 1 < options_.retry.max_attempts) {
      backoff(fmt::format("HTTP {}", exchange.response.status));
      continue;
    }
    if (!isSuccess(exchange.response.status)) {
      SlurmError e = errorFromResponse(op, exchange.response, *token);
      scrubError(e, *token);
      e.attempts = sent;
      return slurmFail(std::move(e));
    }
    exchange.token = std::move(*token);
    return exchange;
  }
}

SlurmResult<PingResult> SlurmRestClient::ping() {
  auto exchange = call("ping", "GET", route("/ping/"), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto decoded = decodePing(exchange->response.body);
  if (!decoded) {
    return slurmFail(
        badResponse("ping", exchange->response, decoded.error(), TransportClass::kRejected));
  }
  return *decoded;
}

SlurmResult<SubmitReceipt> SlurmRestClient::submit(const nlohmann::json& body) {
  auto exchange = call("submit", "POST", route("/job/submit"), body.dump(), RetryMode::kNever);
  if (!exchange) return slurmFail(exchange.error());
  auto receipt = decodeSubmitReceipt(exchange->response.body);
  if (!receipt) {
    // A success status without a readable job id: the job may well exist.
    SlurmError e =
        badResponse("submit", exchange->response, receipt.error(), TransportClass::kUnknown);
    e.error.code = std::string(kErrOutcomeUnknown);
    return slurmFail(std::move(e));
  }
  return *receipt;
}

SlurmResult<std::vector<JobRecord>> SlurmRestClient::getJob(const std::string& job) {
  auto exchange =
      call("get_job", "GET", route("/job/" + encodePathSegment(job)), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto jobs = decodeJobs(exchange->response.body);
  if (!jobs) {
    return slurmFail(
        badResponse("get_job", exchange->response, jobs.error(), TransportClass::kRejected));
  }
  if (jobs->empty()) {
    // A success status with no job in it and no error of Slurm's: not Slurm's "invalid job
    // id" (which comes as HTTP 404 with error 2017), so it proves nothing.
    SlurmError e = makeSlurmError(kErrBadResponse, "get_job",
                                  "slurmrestd answered without job " + job +
                                      " and without Slurm's error for it (not Slurm's word)",
                                  TransportClass::kRejected);
    e.http_status = exchange->response.status;
    auto errors = decodeMessages(exchange->response.body, "errors");
    if (errors && !errors->empty()) {
      e.slurm_error_number = errors->front().error_number;
      e.slurm_error = errors->front().error;
      e.slurm_description = errors->front().description;
      if (e.slurm_error_number == kSlurmInvalidJobId) {
        e.error.code = std::string(kErrJobNotFound);
        e.error.message = "slurmctld holds no job " + job;
      }
    }
    scrubError(e, exchange->token);
    return slurmFail(std::move(e));
  }
  return std::move(*jobs);
}

SlurmResult<JobListing> SlurmRestClient::listJobs(std::optional<int64_t> update_time) {
  std::string path = route("/jobs/");
  if (update_time) path += fmt::format("?update_time={}", *update_time);
  auto exchange = call("list_jobs", "GET", path, "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto listing = decodeJobListing(exchange->response.body);
  if (!listing) {
    return slurmFail(
        badResponse("list_jobs", exchange->response, listing.error(), TransportClass::kRejected));
  }
  return std::move(*listing);
}

SlurmResult<JobStateList> SlurmRestClient::listJobStates(const std::vector<uint64_t>& job_ids) {
  JobStateList out;
  size_t next = 0;
  do {
    // Repeated `job_id=` parameters: the documented CSV form answers 500 on a real server.
    std::string query;
    size_t end = std::min(job_ids.size(), next + kMaxIdsPerStateQuery);
    for (; next < end; ++next) {
      query += (query.empty() ? "?" : "&") + fmt::format("job_id={}", job_ids[next]);
    }
    auto exchange =
        call("list_job_states", "GET", route("/jobs/state/") + query, "", RetryMode::kReads);
    if (!exchange) return slurmFail(exchange.error());
    auto states = decodeJobStates(exchange->response.body);
    if (!states) {
      return slurmFail(badResponse("list_job_states", exchange->response, states.error(),
                                   TransportClass::kRejected));
    }
    out.append(std::move(*states));
  } while (next < job_ids.size());
  return out;
}

SlurmStatus SlurmRestClient::cancel(const std::string& sluid,
                                    const std::optional<std::string>& signal) {
  std::string path = route("/job/" + encodePathSegment(sluid));
  if (signal) path += "?signal=" + encodePathSegment(*signal);
  auto exchange = call("cancel", "DELETE", path, "", RetryMode::kNotSentOnly);
  if (!exchange) return slurmFail(exchange.error());
  // DELETE answers 200 even when it failed: the refusal is in status[] (or errors[]). An
  // answer that cannot be read does not say whether the job was cancelled.
  auto refusals = decodeCancelStatus(exchange->response.body);
  if (!refusals) {
    return slurmFail(
        badResponse("cancel", exchange->response, refusals.error(), TransportClass::kUnknown));
  }
  if (refusals->empty()) {
    auto errors = decodeMessages(exchange->response.body, "errors");
    if (errors) refusals = std::move(*errors);
  }
  if (refusals->empty()) return {};
  const SlurmMessage& first = refusals->front();
  std::string_view code = kErrRejected;
  if (first.error_number == kSlurmInvalidJobId) code = kErrJobNotFound;
  if (first.error_number == kSlurmAlreadyComplete) code = kErrAlreadyCompleting;
  SlurmError e = makeSlurmError(
      code, "cancel", fmt::format("slurmctld refused to cancel {}: {}", sluid, first.error),
      TransportClass::kRejected);
  e.http_status = exchange->response.status;
  e.slurm_error_number = first.error_number;
  e.slurm_error = first.error;
  e.slurm_description = first.description;
  scrubError(e, exchange->token);
  return slurmFail(std::move(e));
}

SlurmResult<std::vector<PartitionInfo>> SlurmRestClient::listPartitions() {
  auto exchange = call("list_partitions", "GET", route("/partitions/"), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto parts = decodePartitions(exchange->response.body);
  if (!parts) {
    return slurmFail(badResponse("list_partitions", exchange->response, parts.error(),
                                 TransportClass::kRejected));
  }
  return std::move(*parts);
}

SlurmResult<std::vector<NodeInfo>> SlurmRestClient::listNodes() {
  auto exchange = call("list_nodes", "GET", route("/nodes/"), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto nodes = decodeNodes(exchange->response.body);
  if (!nodes) {
    return slurmFail(
        badResponse("list_nodes", exchange->response, nodes.error(), TransportClass::kRejected));
  }
  return std::move(*nodes);
}

}  // namespace tuneplane::slurm
