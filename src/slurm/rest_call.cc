// One request to slurmrestd (SlurmRestClient::call): the auth headers, one token refresh when
// the server refuses it, retries with bounded exponential backoff and jitter (reads only),
// and every answer that is not a success turned into a SlurmError with Slurm's first error,
// the token scrubbed from it.
#include "slurm/rest_client.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "slurm/answer_decoder.h"
#include "slurm/token_scrub.h"

namespace tuneplane::slurm {
namespace {

// Answers are decoded where the transport left them: it keeps the padding the decoder needs.
static_assert(http::kBodyPadding >= kJsonPadding);

std::string lowercase(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

using detail::scrub;
using detail::scrubError;

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

}  // namespace tuneplane::slurm
