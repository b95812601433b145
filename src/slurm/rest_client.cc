#include "slurm/rest_client.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/percent_encoding.h"
#include "slurm/answer_decoder.h"
#include "slurm/client_factory.h"
#include "slurm/job_key.h"
#include "slurm/sluid.h"

namespace tuneplane::slurm {
namespace {

// Answers are decoded where the transport left them: it keeps the padding the decoder needs.
static_assert(http::kBodyPadding >= kJsonPadding);

std::string lowercase(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
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

// GET /slurm/<version>/ping/: the one route that answers 200 to a refused token.
bool isPingPath(const std::string& path) {
  constexpr std::string_view kSuffix = "/ping/";
  return path.rfind("/slurm/", 0) == 0 && path.size() > kSuffix.size() &&
         path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

// Slurm's own refusal of a submit: an ESLURM_* number (2000-2999) from
// slurm_submit_batch_job() means slurmctld answered and made no job. Slurm 26.05's slurmrestd
// sends it with HTTP 422, 25.11's with 500 (tests/data/slurm/v0.0.44/transcripts/13c): the
// number decides, not the status.
bool slurmctldRefusedSubmit(const SlurmMessage& m) {
  return m.error_number >= 2000 && m.error_number < 3000 &&
         m.source.rfind("slurm_submit_batch", 0) == 0;
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
      if (m.error_number == kSlurmUserUnknown) return false;  // the user's, not the token's
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
    if (slurmctldRefusedSubmit(errors.front())) code = kErrRejected;
    // A user slurmctld does not know: refused before anything was done (a submit made no
    // job), the same answer each time — a refusal to report, not a failure to retry.
    if (e.slurm_error_number == kSlurmUserUnknown) {
      code = kErrRejected;
      e.transport = TransportClass::kRejected;
    }
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
  if (options_.api_version != kAutoApiVersion) {
    const SlurmApi* api = findSlurmApi(options_.api_version);
    if (api != nullptr) {
      choice_ = ApiChoice{api, options_.api_version, {}, "", "slurm.api_version"};
      api_ = api;
    }
  }
}

SlurmRestClient::SlurmRestClient(RestClientOptions options,
                                 std::shared_ptr<http::HttpTransport> transport,
                                 std::unique_ptr<TokenProvider> tokens,
                                 const SlurmRestClient& parent)
    : options_(std::move(options)), transport_(std::move(transport)), tokens_(std::move(tokens)) {
  // The parent's version, once chosen; else the view negotiates as the parent would.
  if (const SlurmApi* api = parent.api_.load()) {
    choice_ = parent.choice_;
    api_ = api;
  }
}

SlurmClient& SlurmRestClient::as(const std::string& user) {
  if (user.empty() || !options_.identities || user == options_.user) return *this;
  std::lock_guard<std::mutex> lock(views_mu_);
  auto& slot = views_[user];
  if (!slot) {
    RestClientOptions view = options_;
    view.user = user;
    view.identities = nullptr;
    if (const SlurmApi* api = api_.load()) view.api_version = std::string(api->name);
    slot.reset(new SlurmRestClient(std::move(view), transport_,
                                   std::make_unique<BorrowedTokenProvider>(
                                       options_.identities->forUser(user), options_.identities),
                                   *this));
  }
  return *slot;
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
  auto factory = SlurmClientFactory::fromSite(site, std::move(clock));
  if (!factory) return tl::unexpected(factory.error());
  return factory->make();
}

SlurmResult<ApiChoice> SlurmRestClient::negotiate() {
  std::lock_guard lock(negotiate_mu_);
  if (api_.load() != nullptr) return choice_;
  if (options_.api_version != kAutoApiVersion) {
    auto chosen = chooseSlurmApi(options_.api_version, {options_.api_version});
    return slurmFail(makeSlurmError(chosen.error().code, chosen.error().field,
                                    chosen.error().message, TransportClass::kNotSent));
  }
  ApiChoice choice;
  choice.configured = options_.api_version;
  auto document = call("negotiate", "GET", "/openapi/v3", "", RetryMode::kReads);
  if (document) {
    auto offered = offeredApis(document->response.body);
    if (offered) {
      choice.offered = std::move(offered->versions);
      choice.release = std::move(offered->release);
      choice.how = "GET /openapi/v3";
    }
  } else if (document.error().http_status == 0 || document.error().error.code == kErrAuthFailed) {
    return slurmFail(document.error());  // nothing answered, or the token was refused
  }
  if (choice.offered.empty()) {
    // No OpenAPI document (an older slurmrestd, a proxy that hides it): a version's ping
    // route exists only when slurmrestd loaded its data parser.
    for (const SlurmApi* api : slurmApis()) {
      auto ping = call("negotiate", "GET", api->route("/ping/"), "", RetryMode::kReads);
      if (ping) {
        if (auto pinged = decodePing(ping->response.body)) {
          choice.offered.push_back(std::string(api->name));
          if (choice.release.empty()) choice.release = pinged->release;
        }
      } else if (ping.error().http_status != 404) {
        return slurmFail(ping.error());
      }
    }
    choice.how = "a ping per version";
  }
  auto chosen = chooseSlurmApi(choice.configured, choice.offered);
  if (!chosen) {
    SlurmError e =
        makeSlurmError(chosen.error().code, chosen.error().field,
                       "slurmrestd at " + options_.http.base_url + ": " + chosen.error().message,
                       TransportClass::kNotSent);
    spdlog::error("slurm: {}", e.error.message);
    return slurmFail(std::move(e));
  }
  choice.api = *chosen;
  choice_ = std::move(choice);
  api_ = choice_.api;
  spdlog::info("slurm: speaking {}", describeChoice(choice_));
  for (const Degradation& d : choice_.api->degradations) {
    spdlog::warn("slurm: REST API {}: {}: {}", choice_.api->name, d.what, d.instead);
  }
  return choice_;
}

SlurmResult<const SlurmApi*> SlurmRestClient::ensureApi(const char* op) {
  if (const SlurmApi* api = api_.load()) return api;
  auto chosen = negotiate();
  if (chosen) return chosen->api;
  // Whatever went wrong, this operation's own request was never sent.
  SlurmError e = chosen.error();
  e.transport = TransportClass::kNotSent;
  if (e.error.code != kErrAuthFailed && e.error.code != kErrTokenUnavailable &&
      e.error.code != kErrNoCommonApi && e.error.code != kErrConfig) {
    e.error.code = std::string(kErrNotSent);
  }
  e.error.field = op;
  e.error.message = "not sent: the REST API version is not negotiated yet: " + e.error.message;
  return slurmFail(std::move(e));
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
    if (isAuthFailure(exchange.response, isPingPath(path))) {
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
  auto api = ensureApi("ping");
  if (!api) return slurmFail(api.error());
  std::string token;  // the one the ping was answered to
  auto pingOnce = [&]() -> SlurmResult<PingResult> {
    auto exchange = call("ping", "GET", (*api)->route("/ping/"), "", RetryMode::kReads);
    if (!exchange) return slurmFail(exchange.error());
    token = exchange->token;
    auto decoded = decodePing(exchange->response.body);
    if (!decoded) {
      return slurmFail(
          badResponse("ping", exchange->response, decoded.error(), TransportClass::kRejected));
    }
    return *decoded;
  };
  auto pinged = pingOnce();
  if (!pinged || (*api)->ping_names_refusal || pinged->anyResponding()) return pinged;
  // This version's ping does not say why no controller responds, and a refused token reads
  // the same as a controller that is down: a request that does say it decides.
  auto probe =
      call("ping", "GET", (*api)->route(std::string((*api)->auth_probe)), "", RetryMode::kReads);
  if (!probe) {
    const std::string& code = probe.error().error.code;
    if (code == kErrAuthFailed || code == kErrTokenUnavailable) return slurmFail(probe.error());
    return pinged;  // the controllers are down: the probe failed for that, as the ping said
  }
  if (probe->token != token) return pingOnce();  // the probe refreshed a refused token
  return pinged;
}

SlurmResult<std::string> SlurmRestClient::readPath(const char* op, const std::string& path) {
  auto api = ensureApi(op);
  if (!api) return slurmFail(api.error());
  auto exchange = call(op, "GET", path, "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  return std::move(exchange->response.body);
}

SlurmResult<SubmitReceipt> SlurmRestClient::submit(const nlohmann::json& body) {
  auto api = ensureApi("submit");
  if (!api) return slurmFail(api.error());
  auto versioned = submitBodyFor(**api, body);
  if (!versioned) {
    return slurmFail(makeSlurmError(kErrConfig, versioned.error().field, versioned.error().message,
                                    TransportClass::kNotSent));
  }
  auto exchange =
      call("submit", "POST", (*api)->route("/job/submit"), versioned->dump(), RetryMode::kNever);
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
  auto api = ensureApi("get_job");
  if (!api) return slurmFail(api.error());
  auto key = parseJobKey(job);
  if (!key) return readJob(**api, "get_job", job);  // not a key: sent as it is
  const JobAddressing addressing = (*api)->addressing;
  auto path_id = pathIdFor(addressing, *key);
  if (!path_id) {
    auto id = numericIdOf(**api, "get_job", key->sluid);
    if (!id) return slurmFail(id.error());
    key->job_id = *id;
    path_id = std::to_string(*id);
  }
  auto records = readJob(**api, "get_job", *path_id);
  if (!records) return records;
  if (needsConfirmation(addressing, *key)) {
    const Confirmed confirmed = confirmJob(*key, *records);
    if (confirmed.verdict == Confirmation::kGone) {
      return slurmFail(
          makeSlurmError(kErrJobNotFound, "get_job", confirmed.why, TransportClass::kRejected));
    }
    if (confirmed.verdict == Confirmation::kUnproven) {
      return slurmFail(makeSlurmError(kErrBadResponse, "get_job",
                                      confirmed.why + " (nothing is concluded from it)",
                                      TransportClass::kRejected));
    }
  }
  for (auto& record : *records) record.sluid = jobKeyLike(*key, addressing, record);
  return records;
}

SlurmResult<uint64_t> SlurmRestClient::numericIdOf(const SlurmApi& api, const char* op,
                                                   const std::string& sluid) {
  auto exchange = call(op, "GET", api.route("/jobs/"), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto listing = decodeJobListing(exchange->response.body);
  if (!listing) {
    return slurmFail(
        badResponse(op, exchange->response, listing.error(), TransportClass::kRejected));
  }
  for (const auto& record : listing->jobs) {
    if (Sluid(record.sluid) == Sluid(sluid)) return record.job_id;
  }
  return slurmFail(makeSlurmError(kErrJobNotFound, op,
                                  "Slurm's job listing holds no job with SLUID " + sluid +
                                      " (REST API " + std::string(api.name) +
                                      " takes no SLUID in a path, so it was looked up there)",
                                  TransportClass::kRejected));
}

SlurmResult<std::vector<JobRecord>> SlurmRestClient::readJob(const SlurmApi& api, const char* op,
                                                             const std::string& job) {
  auto exchange = call(op, "GET", api.route("/job/" + percentEncode(job)), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto jobs = decodeJobs(exchange->response.body);
  if (!jobs) {
    return slurmFail(badResponse(op, exchange->response, jobs.error(), TransportClass::kRejected));
  }
  if (jobs->empty()) {
    // A success status with no job in it and no error of Slurm's: not Slurm's "invalid job
    // id" (which comes as HTTP 404 with error 2017), so it proves nothing.
    SlurmError e = makeSlurmError(kErrBadResponse, op,
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
  auto api = ensureApi("list_jobs");
  if (!api) return slurmFail(api.error());
  std::string path = (*api)->route("/jobs/");
  if (update_time) path += fmt::format("?update_time={}", *update_time);
  auto exchange = call("list_jobs", "GET", path, "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto listing = decodeJobListing(exchange->response.body);
  if (!listing) {
    return slurmFail(
        badResponse("list_jobs", exchange->response, listing.error(), TransportClass::kRejected));
  }
  for (auto& record : listing->jobs) keyRecord((*api)->addressing, record);
  return std::move(*listing);
}

SlurmResult<JobStateList> SlurmRestClient::listJobStates(const std::vector<uint64_t>& job_ids) {
  auto api = ensureApi("list_job_states");
  if (!api) return slurmFail(api.error());
  JobStateList out;
  size_t next = 0;
  do {
    // Repeated `job_id=` parameters: the documented CSV form answers 500 on a real server.
    std::string query;
    size_t end = std::min(job_ids.size(), next + kMaxIdsPerStateQuery);
    for (; next < end; ++next) {
      query += (query.empty() ? "?" : "&") + fmt::format("job_id={}", job_ids[next]);
    }
    auto exchange = call("list_job_states", "GET", (*api)->route("/jobs/state/") + query, "",
                         RetryMode::kReads);
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
  auto api = ensureApi("cancel");
  if (!api) return slurmFail(api.error());
  std::string path_id = sluid;  // not a key: sent as it is
  if (auto key = parseJobKey(sluid)) {
    const JobAddressing addressing = (*api)->addressing;
    auto id = pathIdFor(addressing, *key);
    const bool by_listing = !id;
    if (by_listing) {
      auto found = numericIdOf(**api, "cancel", key->sluid);
      if (!found) return slurmFail(found.error());
      key->job_id = *found;
      id = std::to_string(*found);
    }
    if (by_listing || needsConfirmation(addressing, *key)) {
      // By numeric id: only the job the key names is signalled, and only while it may still
      // run — a job that ended may be purged, and its id reused, at any moment.
      auto records = readJob(**api, "cancel", *id);
      if (!records) return slurmFail(records.error());
      const Confirmed confirmed = confirmJob(*key, *records);
      if (confirmed.verdict != Confirmation::kSame) {
        const bool gone = confirmed.verdict == Confirmation::kGone;
        return slurmFail(makeSlurmError(gone ? kErrJobNotFound : kErrBadResponse, "cancel",
                                        "not sent: " + confirmed.why, TransportClass::kRejected));
      }
      for (const auto& record : *records) {
        if (record.job_id == key->job_id && !mayStillRun(record)) {
          return slurmFail(
              makeSlurmError(kErrAlreadyCompleting, "cancel",
                             fmt::format("not sent: job {} ({}) already ended ({})", key->job_id,
                                         sluid, fmt::join(record.job_state, ",")),
                             TransportClass::kRejected));
        }
      }
    }
    path_id = *id;
  }
  std::string path = (*api)->route("/job/" + percentEncode(path_id));
  if (signal) path += "?signal=" + percentEncode(*signal);
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
  auto api = ensureApi("list_partitions");
  if (!api) return slurmFail(api.error());
  auto exchange =
      call("list_partitions", "GET", (*api)->route("/partitions/"), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto parts = decodePartitions(exchange->response.body);
  if (!parts) {
    return slurmFail(badResponse("list_partitions", exchange->response, parts.error(),
                                 TransportClass::kRejected));
  }
  return std::move(*parts);
}

SlurmResult<std::vector<NodeInfo>> SlurmRestClient::listNodes() {
  auto api = ensureApi("list_nodes");
  if (!api) return slurmFail(api.error());
  auto exchange = call("list_nodes", "GET", (*api)->route("/nodes/"), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto nodes = decodeNodes(exchange->response.body);
  if (!nodes) {
    return slurmFail(
        badResponse("list_nodes", exchange->response, nodes.error(), TransportClass::kRejected));
  }
  return std::move(*nodes);
}

}  // namespace tuneplane::slurm
