// slurmrestd, slurmctld, api_version and token judged from tables of gathered facts.
#include "doctor/slurm_checks.h"

#include <gtest/gtest.h>

#include <functional>

#include "fixtures.h"

namespace tuneplane::doctor {
namespace {

using slurm::TransportClass;
using testing::answered;
using testing::contains;
using testing::pingOk;
using testing::slurmError;

SlurmFacts pingFailed(slurm::SlurmError e) {
  SlurmFacts f;
  f.url = "http://slurm:6820";
  f.ping = tl::unexpected<slurm::SlurmError>(std::move(e));
  return f;
}

struct SlurmRow {
  const char* name;
  SlurmFacts facts;
  CheckStatus status;
  const char* says;
};

void expectRows(const std::vector<SlurmRow>& rows,
                const std::function<CheckResult(const SlurmFacts&)>& check) {
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const CheckResult r = check(row.facts);
    EXPECT_EQ(toString(r.status), std::string(toString(row.status))) << r.message;
    EXPECT_TRUE(contains(r.message, row.says)) << r.message;
    if (r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail) {
      EXPECT_FALSE(r.fix.empty()) << "a problem without a fix";
    }
  }
}

SlurmFacts noToken() {
  SlurmFacts f;
  f.no_token = true;
  return f;
}

SlurmFacts noClient() {
  SlurmFacts f;
  f.url = "gopher://x";
  f.client_error = Error{"slurm.config", "slurm.url", "unsupported scheme"};
  return f;
}

TEST(SlurmChecksTest, Slurmrestd) {
  expectRows(
      {
          {"answered", answered(), CheckStatus::kOk, "answered: cluster tp, Slurm 26.05.3"},
          {"refused the token: it still answered",
           pingFailed(slurmError(slurm::kErrAuthFailed, TransportClass::kRejected, 511)),
           CheckStatus::kOk, "refused the token"},
          {"404: something answered",
           pingFailed(slurmError(slurm::kErrJobNotFound, TransportClass::kRejected, 404)),
           CheckStatus::kOk, "HTTP 404"},
          {"connection refused",
           pingFailed(slurmError(slurm::kErrNotSent, TransportClass::kNotSent, 0, "refused")),
           CheckStatus::kFail, "cannot reach slurmrestd at http://slurm:6820: refused"},
          {"timeout after sending",
           pingFailed(slurmError(slurm::kErrOutcomeUnknown, TransportClass::kUnknown, 0)),
           CheckStatus::kFail, "did not answer"},
          {"not JSON",
           pingFailed(slurmError(slurm::kErrBadResponse, TransportClass::kRejected, 200)),
           CheckStatus::kFail, "not with slurmrestd's JSON"},
          {"503", pingFailed(slurmError(slurm::kErrServerError, TransportClass::kRejected, 503)),
           CheckStatus::kFail, "answered with an error"},
          {"no token to send", noToken(), CheckStatus::kSkip, "no token"},
          {"no client", noClient(), CheckStatus::kFail, "cannot set up a client"},
      },
      checkSlurmrestd);
}

TEST(SlurmChecksTest, Controllers) {
  SlurmFacts one_down = answered();
  one_down.ping = pingOk({{"ctl1", true, true, 500, "No error"},
                          {"ctl2", false, false, 0, "Unable to contact slurm controller"}});
  SlurmFacts all_down = answered();
  all_down.ping = pingOk({{"ctl1", false, true, 0, "Unable to contact slurm controller"}});
  SlurmFacts none = answered();
  none.ping = pingOk({});
  expectRows(
      {
          {"all respond", answered(), CheckStatus::kOk, "1 controller responding: ctl1 (primary)"},
          {"backup down", one_down, CheckStatus::kWarn, "ctl2: Unable to contact"},
          {"none responds", all_down, CheckStatus::kFail, "no slurmctld responds"},
          {"none listed", none, CheckStatus::kFail, "lists no slurmctld"},
          {"unreachable", pingFailed(slurmError(slurm::kErrNotSent, TransportClass::kNotSent, 0)),
           CheckStatus::kSkip, "did not answer"},
          {"token refused",
           pingFailed(slurmError(slurm::kErrAuthFailed, TransportClass::kRejected, 511)),
           CheckStatus::kSkip, "refused the token"},
          {"ping answered 503",
           pingFailed(slurmError(slurm::kErrServerError, TransportClass::kRejected, 503)),
           CheckStatus::kSkip, "ping failed"},
          {"no token", noToken(), CheckStatus::kSkip, "no token to send"},
          {"no client", noClient(), CheckStatus::kSkip, "no client"},
      },
      checkControllers);
}

TEST(SlurmChecksTest, ApiVersion) {
  SlurmFacts other_parser = answered();
  other_parser.ping = pingOk();
  (*other_parser.ping)->data_parser = "data_parser/v0.0.44";
  SlurmFacts no_meta = answered();
  (*no_meta.ping)->data_parser = "";
  expectRows(
      {
          {"v0.0.45", answered(), CheckStatus::kOk, "serves v0.0.45"},
          {"route answered without meta", no_meta, CheckStatus::kOk, "names no data parser"},
          {"another parser named", other_parser, CheckStatus::kWarn, "data_parser/v0.0.44"},
          {"no such route",
           pingFailed(slurmError(slurm::kErrJobNotFound, TransportClass::kRejected, 404)),
           CheckStatus::kFail, "has no v0.0.45 routes (HTTP 404 for GET /slurm/v0.0.45/ping/)"},
          {"unreachable", pingFailed(slurmError(slurm::kErrNotSent, TransportClass::kNotSent, 0)),
           CheckStatus::kSkip, "did not answer"},
      },
      checkApiVersion);
}

// Issue 40: the version TunePlane speaks, negotiated (auto) or set, and what it costs.
SlurmFacts onVersion(const char* configured, const char* version, std::vector<std::string> offered,
                     std::string release) {
  SlurmFacts f = answered();
  f.api_version = configured;
  (*f.ping)->data_parser = std::string("data_parser/") + version;
  (*f.ping)->release = release;
  f.api = slurm::ApiChoice{slurm::findSlurmApi(version), configured, std::move(offered),
                           std::move(release), "GET /openapi/v3"};
  return f;
}

SlurmFacts speaksNone() {
  SlurmFacts f;
  f.url = "http://slurm:6820";
  f.api_version = "auto";
  slurm::SlurmError e = slurm::makeSlurmError(
      slurm::kErrNoCommonApi, "slurm.api_version",
      "slurmrestd at http://slurm:6820: slurmrestd serves REST API v0.0.41, v0.0.42, and "
      "TunePlane speaks v0.0.44, v0.0.45: none in common",
      TransportClass::kNotSent);
  f.api = tl::unexpected<slurm::SlurmError>(e);
  f.ping = tl::unexpected<slurm::SlurmError>(e);
  return f;
}

TEST(SlurmChecksTest, ApiVersionNegotiatedAndWhatItCosts) {
  expectRows(
      {
          {"auto on 26.05: v0.0.45, nothing lost",
           onVersion("auto", "v0.0.45", {"v0.0.44", "v0.0.45"}, "26.05.3"), CheckStatus::kOk,
           "serves v0.0.45 (chosen by slurm.api_version: auto from what it serves: v0.0.44, "
           "v0.0.45"},
          {"auto on 25.11: v0.0.44, and what degrades",
           onVersion("auto", "v0.0.44", {"v0.0.44"}, "25.11.7"), CheckStatus::kWarn,
           "on v0.0.44 TunePlane degrades: no SLUID in paths"},
          {"v0.0.44 set on 26.05 degrades the same", onVersion("v0.0.44", "v0.0.44", {}, "26.05.3"),
           CheckStatus::kWarn, "set by slurm.api_version"},
          {"a server that speaks none of TunePlane's", speaksNone(), CheckStatus::kFail,
           "serves REST API v0.0.41, v0.0.42"},
      },
      checkApiVersion);
  const CheckResult on2511 = checkApiVersion(onVersion("auto", "v0.0.44", {"v0.0.44"}, "25.11.7"));
  EXPECT_EQ(on2511.details["api"]["version"], "v0.0.44");
  EXPECT_EQ(on2511.details["api"]["release"], "25.11.7");
  EXPECT_EQ(on2511.details["api"]["degradations"].size(), 3u);
  // The server answered: slurmrestd is fine; the cluster's checks say why they are skipped.
  expectRows({{"speaks none", speaksNone(), CheckStatus::kOk, "serves none of TunePlane's"}},
             checkSlurmrestd);
  expectRows({{"speaks none", speaksNone(), CheckStatus::kSkip, "see api_version"}},
             checkControllers);
}

constexpr int64_t kNowSeconds = 1'800'000'000;

TokenFacts fileToken(std::optional<int64_t> expires_at, std::string subject = "tpuser") {
  TokenFacts t;
  t.source = TokenSource::kTokenFile;
  t.path = "/etc/tuneplane/slurm.jwt";
  t.site_user = "tpuser";
  t.decoded = true;
  t.subject = std::move(subject);
  t.expires_at = expires_at;
  t.now_unix = kNowSeconds;
  return t;
}

TokenFacts keyToken() {
  TokenFacts t = fileToken(kNowSeconds + 1800);
  t.source = TokenSource::kJwtKey;
  t.path = "/etc/tuneplane/jwt.key";
  t.lifespan = std::chrono::seconds(1800);
  return t;
}

TEST(SlurmChecksTest, Token) {
  const SlurmFacts accepted = answered();
  const SlurmFacts refused =
      pingFailed(slurmError(slurm::kErrAuthFailed, TransportClass::kRejected, 511));
  const SlurmFacts unreachable =
      pingFailed(slurmError(slurm::kErrNotSent, TransportClass::kNotSent, 0));
  TokenFacts unreadable = fileToken(std::nullopt);
  unreadable.unavailable = Error{"slurm.token_unavailable", "", "the token file does not exist"};
  TokenFacts garbage = fileToken(std::nullopt);
  garbage.decoded = false;
  garbage.subject.reset();
  TokenFacts key_unreadable = keyToken();
  key_unreadable.unavailable = Error{"slurm.config", "", "cannot read the JWT key file"};
  TokenFacts minted = keyToken();
  minted.decoded = true;
  minted.subject = "tpuser";
  minted.expires_at = kNowSeconds + 1800;

  struct TokenRow {
    const char* name;
    TokenFacts token;
    SlurmFacts facts;
    CheckStatus status;
    const char* says;
  };
  const TokenRow rows[] = {
      {"valid for days", fileToken(kNowSeconds + 5 * 86400 + 7200), accepted, CheckStatus::kOk,
       "token for 'tpuser' in /etc/tuneplane/slurm.jwt valid for 5d 2h"},
      {"server not reached", fileToken(kNowSeconds + 5 * 86400), unreachable, CheckStatus::kOk,
       "not confirmed"},
      {"expires within the hour", fileToken(kNowSeconds + 1800), accepted, CheckStatus::kWarn,
       "expires in 30m"},
      {"expired", fileToken(kNowSeconds - 120), refused, CheckStatus::kFail, "expired 2m ago"},
      {"no exp claim", fileToken(std::nullopt), accepted, CheckStatus::kWarn, "no exp claim"},
      {"unreadable file", unreadable, unreachable, CheckStatus::kFail,
       "cannot use the token file /etc/tuneplane/slurm.jwt: the token file does not exist"},
      {"not a JWT", garbage, refused, CheckStatus::kFail, "does not hold a JWT"},
      {"refused, another user's token", fileToken(kNowSeconds + 86400, "alice"), refused,
       CheckStatus::kFail, "a token for 'alice', but slurm.user is 'tpuser'"},
      {"refused, right user", fileToken(kNowSeconds + 86400), refused, CheckStatus::kFail,
       "slurmrestd refused the token in /etc/tuneplane/slurm.jwt, although its exp is 1d ahead"},
      {"minted and accepted", keyToken(), accepted, CheckStatus::kOk,
       "minted from /etc/tuneplane/jwt.key, each valid for 30m"},
      {"minted: the current one's exp", minted, accepted, CheckStatus::kOk,
       "each valid for 30m (the current one until "},
      {"minted, wrong key", keyToken(), refused, CheckStatus::kFail,
       "the key is not the one slurmrestd checks with"},
      {"key unreadable", key_unreadable, SlurmFacts{}, CheckStatus::kFail,
       "cannot use the JWT key file (jwt_key_file) /etc/tuneplane/jwt.key"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const CheckResult r = checkToken(row.token, row.facts);
    EXPECT_EQ(toString(r.status), std::string(toString(row.status))) << r.message;
    EXPECT_TRUE(contains(r.message, row.says)) << r.message;
    if (r.status != CheckStatus::kOk) {
      EXPECT_TRUE(contains(
          r.fix, row.token.source == TokenSource::kTokenFile ? "scontrol token" : "jwt_key"))
          << r.fix;
    }
  }
}

TEST(SlurmChecksTest, TokenDetailsSayHowLongItLasts) {
  const CheckResult r = checkToken(fileToken(kNowSeconds + 7200), answered());
  EXPECT_EQ(r.details["expires_in_seconds"], 7200);
  EXPECT_EQ(r.details["server"], "accepted");
  EXPECT_EQ(r.details["source"], "token_file");
  EXPECT_EQ(r.details["token_user"], "tpuser");
}

}  // namespace
}  // namespace tuneplane::doctor
