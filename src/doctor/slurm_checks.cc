#include "doctor/slurm_checks.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/human.h"

namespace tuneplane::doctor {
namespace {

using nlohmann::json;
using slurm::SlurmError;

bool isAuthFailure(const SlurmError& e) {
  return e.error.code == slurm::kErrAuthFailed;
}

bool noToken(const SlurmError& e) {
  return e.error.code == slurm::kErrTokenUnavailable;
}

// The server answered, and speaks none of TunePlane's REST API versions (or not the one set).
bool noCommonApi(const SlurmFacts& f) {
  return f.api && !*f.api && f.api->error().error.code == slurm::kErrNoCommonApi;
}

// The version the client speaks: negotiated, else the one configured, else (auto, not asked)
// the one its ping's answer names.
std::string versionOf(const SlurmFacts& f) {
  if (f.api && *f.api && (*f.api)->api != nullptr) return std::string((*f.api)->api->name);
  if (f.api_version != slurm::kAutoApiVersion) return f.api_version;
  constexpr std::string_view kParser = "data_parser/";
  if (f.ping && *f.ping && (*f.ping)->data_parser.rfind(kParser, 0) == 0) {
    return (*f.ping)->data_parser.substr(kParser.size());
  }
  return f.api_version;
}

// The answer came back over HTTP (whatever its status), so something listens at the URL.
bool gotHttpAnswer(const SlurmError& e) {
  return e.http_status > 0;
}

json pingDetails(const SlurmFacts& f) {
  json d = {{"url", f.url}};
  if (f.api && *f.api) {
    d["api"] = slurm::choiceJson(f.api_version, &**f.api);
  } else {
    d["api"] = slurm::choiceJson(f.api_version, nullptr);
    if (f.api) d["api"]["error"] = f.api->error().error.message;
  }
  if (f.ping && *f.ping) {
    d["cluster"] = (*f.ping)->cluster;
    d["release"] = (*f.ping)->release;
    d["data_parser"] = (*f.ping)->data_parser;
  } else if (f.ping) {
    d["error"] = f.ping->error().error.code;
    d["http_status"] = f.ping->error().http_status;
    d["transport"] = slurm::toString(f.ping->error().transport);
  }
  return d;
}

std::string tokenFix(const TokenFacts& t) {
  if (t.source == TokenSource::kTokenFile) {
    return fmt::format(
        "write a current token for {0} into {1}: on a Slurm host run `scontrol token "
        "username={0} lifespan=SECONDS` and save its output there (renew it before it expires, "
        "e.g. from cron; TunePlane re-reads the file when it changes)",
        t.site_user, t.path);
  }
  return fmt::format(
      "{} must hold the HS256 key slurmctld and slurmrestd use (AuthAltParameters=jwt_key=… "
      "in slurm.conf), readable by the user TunePlane runs as; and slurm.user ({}) must be a "
      "Slurm user",
      t.path, t.site_user);
}

}  // namespace

std::optional<std::string> whyNoClusterFacts(const SlurmFacts& f) {
  if (f.no_token) return std::string("there is no token to send (see token)");
  if (f.client_error) return std::string("no client for slurmrestd (see slurmrestd)");
  if (noCommonApi(f)) {
    return std::string("slurmrestd serves none of TunePlane's REST API versions (see api_version)");
  }
  if (!f.ping) return std::string("slurmrestd was not asked");
  if (*f.ping) return std::nullopt;
  const SlurmError& e = f.ping->error();
  if (noToken(e)) return std::string("there is no token to send (see token)");
  if (isAuthFailure(e)) return std::string("slurmrestd refused the token (see token)");
  if (e.http_status == 404)
    return "slurmrestd does not serve " + versionOf(f) + " (see api_version)";
  if (gotHttpAnswer(e)) return std::string("slurmrestd's ping failed (see slurmrestd)");
  return std::string("slurmrestd did not answer (see slurmrestd)");
}

CheckResult checkSlurmrestd(const SlurmFacts& f) {
  const std::string name = "slurmrestd";
  if (f.client_error) {
    return failCheck(
        name,
        fmt::format("cannot set up a client for slurm.url {}: {}", f.url, f.client_error->message),
        "correct slurm.url (http://, https:// or unix:///path) and the TLS files "
        "(slurm.ca_file, client_cert, client_key)",
        pingDetails(f));
  }
  if (!f.ping) return skipCheck(name, "there is no token to send (see token)");
  if (noCommonApi(f)) {
    return okCheck(name,
                   fmt::format("slurmrestd at {} answered, but serves none of TunePlane's REST API "
                               "versions (see api_version)",
                               f.url),
                   pingDetails(f));
  }
  if (*f.ping) {
    const auto& p = **f.ping;
    return okCheck(name,
                   fmt::format("slurmrestd at {} answered: cluster {}, Slurm {}", f.url,
                               p.cluster.empty() ? "(unnamed)" : p.cluster,
                               p.release.empty() ? "(release not reported)" : p.release),
                   pingDetails(f));
  }
  const SlurmError& e = f.ping->error();
  if (noToken(e)) return skipCheck(name, "no token to send (see token)");
  if (isAuthFailure(e)) {
    return okCheck(
        name, fmt::format("slurmrestd at {} answered, but refused the token (see token)", f.url),
        pingDetails(f));
  }
  if (e.http_status == 404) {
    return okCheck(name,
                   fmt::format("an HTTP server at {} answered (HTTP 404 for the {} ping; see "
                               "api_version)",
                               f.url, versionOf(f)),
                   pingDetails(f));
  }
  if (e.transport == slurm::TransportClass::kNotSent) {
    return failCheck(name, fmt::format("cannot reach slurmrestd at {}: {}", f.url, e.error.message),
                     "start slurmrestd (e.g. `systemctl status slurmrestd`) or correct slurm.url; "
                     "for https check slurm.ca_file and the certificate's name, for unix:// the "
                     "socket's path and permissions",
                     pingDetails(f));
  }
  if (e.error.code == slurm::kErrBadResponse) {
    return failCheck(
        name,
        fmt::format("{} answered, but not with slurmrestd's JSON: {}", f.url, e.error.message),
        "point slurm.url at slurmrestd itself (not a proxy's error page or another "
        "service)",
        pingDetails(f));
  }
  if (!gotHttpAnswer(e)) {
    return failCheck(name,
                     fmt::format("slurmrestd at {} did not answer: {}", f.url, e.error.message),
                     "check that slurm.url is slurmrestd's address and that it is not overloaded; "
                     "raise slurm.request_timeout if it is merely slow",
                     pingDetails(f));
  }
  return failCheck(name,
                   fmt::format("slurmrestd at {} answered with an error: {}", f.url, e.describe()),
                   "read slurmrestd's and slurmctld's logs for this request", pingDetails(f));
}

CheckResult checkControllers(const SlurmFacts& f) {
  const std::string name = "slurmctld";
  if (!f.ping || !*f.ping) {
    auto why = whyNoClusterFacts(f);
    return skipCheck(name, why.value_or("no ping answer"));
  }
  const auto& controllers = (*f.ping)->controllers;
  json list = json::array();
  std::vector<std::string> up;
  std::vector<std::string> down;
  for (const auto& c : controllers) {
    list.push_back({{"hostname", c.hostname},
                    {"responding", c.responding},
                    {"primary", c.primary},
                    {"status", c.status},
                    {"latency_us", c.latency_us}});
    std::string label = c.hostname + (c.primary ? " (primary)" : "");
    if (c.responding) {
      up.push_back(label);
    } else {
      down.push_back(label + ": " + (c.status.empty() ? "not responding" : c.status));
    }
  }
  json details = {{"controllers", list}};
  if (controllers.empty()) {
    return failCheck(name, "the ping answer lists no slurmctld",
                     "check slurmrestd's configuration (SlurmctldHost in slurm.conf)", details);
  }
  if (up.empty()) {
    return failCheck(name, fmt::format("no slurmctld responds: {}", fmt::join(down, "; ")),
                     "start slurmctld and check that slurmrestd's host can reach it (network, "
                     "munge or auth/slurm keys)",
                     details);
  }
  if (!down.empty()) {
    return warnCheck(name,
                     fmt::format("{} of {} controllers respond; not responding: {}", up.size(),
                                 controllers.size(), fmt::join(down, "; ")),
                     "start slurmctld on the controllers that do not respond: without them there "
                     "is no failover",
                     details);
  }
  return okCheck(name,
                 fmt::format("{} controller{} responding: {}", up.size(), up.size() == 1 ? "" : "s",
                             fmt::join(up, ", ")),
                 details);
}

CheckResult checkApiVersion(const SlurmFacts& f) {
  const std::string name = "api_version";
  if (noCommonApi(f)) {
    return failCheck(name, f.api->error().error.message,
                     "run a slurmrestd that loads a data parser TunePlane speaks (`slurmrestd -d "
                     "list` shows them; Slurm 25.11 serves v0.0.44, 26.05 v0.0.44 and v0.0.45), "
                     "or set slurm.api_version to auto",
                     pingDetails(f));
  }
  const std::string version = versionOf(f);
  const std::string route = "/slurm/" + version + "/ping/";
  if (f.ping && !*f.ping && f.ping->error().http_status == 404) {
    return failCheck(
        name,
        fmt::format("slurmrestd at {} has no {} routes (HTTP 404 for GET {})", f.url, version,
                    route),
        fmt::format("TunePlane speaks REST API {}: set slurm.api_version to auto (the newest "
                    "both sides speak), or run a slurmrestd that loads data_parser/{} "
                    "(`slurmrestd -d list` shows the parsers it has)",
                    slurm::slurmApiNames(), version),
        pingDetails(f));
  }
  if (!f.ping || !*f.ping) {
    auto why = whyNoClusterFacts(f);
    return skipCheck(name, why.value_or("no ping answer"));
  }
  const std::string expected = fmt::format("data_parser/{}", version);
  const std::string& parser = (*f.ping)->data_parser;
  if (!parser.empty() && parser != expected) {
    return warnCheck(name,
                     fmt::format("GET {} answered, but meta.plugin.data_parser is '{}', not '{}'",
                                 route, parser, expected),
                     "check slurmrestd's data parser plugins (`slurmrestd -d list`); TunePlane "
                     "reads " +
                         version + " shapes",
                     pingDetails(f));
  }
  std::string how = f.api_version == slurm::kAutoApiVersion ? "chosen by slurm.api_version: auto"
                                                            : "set by slurm.api_version";
  if (f.api && *f.api && !(*f.api)->offered.empty()) {
    how += fmt::format(" from what it serves: {}", fmt::join((*f.api)->offered, ", "));
  }
  const std::string release = (*f.ping)->release.empty() ? "" : ", Slurm " + (*f.ping)->release;
  const std::string found =
      fmt::format("slurmrestd serves {} ({}; GET {} answered{}{})", version, how, route,
                  parser.empty() ? "; meta names no data parser" : ", " + parser, release);
  const slurm::SlurmApi* api = slurm::findSlurmApi(version);
  if (api != nullptr && !api->degradations.empty()) {
    std::vector<std::string> lost;
    for (const slurm::Degradation& d : api->degradations) {
      lost.push_back(fmt::format("{} — {}", d.what, d.instead));
    }
    return warnCheck(
        name,
        fmt::format("{}; on {} TunePlane degrades: {}", found, version, fmt::join(lost, "; ")),
        "nothing is needed for TunePlane to stay correct here; to follow jobs by "
        "SLUID again, serve a newer REST API (Slurm 26.05 serves v0.0.45; with "
        "slurm.api_version: auto TunePlane picks it up at its next start) — "
        "docs/operators.md, \"REST API versions\"",
        pingDetails(f));
  }
  return okCheck(name, found, pingDetails(f));
}

CheckResult checkToken(const TokenFacts& t, const SlurmFacts& f) {
  const std::string name = "token";
  const bool from_file = t.source == TokenSource::kTokenFile;
  json details = {{"source", from_file ? "token_file" : "jwt_key_file"},
                  {"path", t.path},
                  {"user", t.site_user}};
  std::string verdict = "unknown";
  if (f.ping && *f.ping) verdict = "accepted";
  if (f.ping && !*f.ping && isAuthFailure(f.ping->error())) verdict = "refused";
  details["server"] = verdict;
  if (t.subject) details["token_user"] = *t.subject;
  if (t.expires_at) {
    details["expires_at"] = formatUtc(*t.expires_at);
    details["expires_in_seconds"] = *t.expires_at - t.now_unix;
  }
  if (!from_file) details["lifespan_seconds"] = t.lifespan.count();

  if (t.unavailable) {
    const std::string what = from_file ? "the token file" : "the JWT key file (jwt_key_file)";
    return failCheck(name,
                     fmt::format("cannot use {} {}: {}", what, t.path, t.unavailable->message),
                     tokenFix(t), details);
  }
  if (from_file && !t.decoded) {
    return failCheck(name,
                     fmt::format("{} does not hold a JWT (header.payload.signature with a JSON "
                                 "payload)",
                                 t.path),
                     tokenFix(t), details);
  }
  if (t.expires_at && *t.expires_at <= t.now_unix) {
    return failCheck(
        name,
        fmt::format("the token in {} expired {} ago ({})", t.path,
                    formatDuration(t.now_unix - *t.expires_at), formatUtc(*t.expires_at)),
        tokenFix(t), details);
  }
  if (verdict == "refused") {
    std::string why = "slurmrestd refused the token";
    if (t.subject && *t.subject != t.site_user && *t.subject != "root" && *t.subject != "slurm") {
      why += fmt::format(
          ": it is a token for '{}', but slurm.user is '{}' and only root or "
          "SlurmUser may act for another user",
          *t.subject, t.site_user);
    } else if (!from_file) {
      why += fmt::format(
          " minted from {}: the key is not the one slurmrestd checks with, or "
          "'{}' is not a Slurm user",
          t.path, t.site_user);
    } else if (t.expires_at) {
      why += fmt::format(
          " in {}, although its exp is {} ahead ({}): it was signed with another key than "
          "slurmrestd's, or the server no longer accepts it (revoked, or the key changed)",
          t.path, formatDuration(*t.expires_at - t.now_unix), formatUtc(*t.expires_at));
    }
    return failCheck(name, why, tokenFix(t), details);
  }
  const std::string confirmed = verdict == "accepted"
                                    ? "accepted by slurmrestd"
                                    : "not confirmed: slurmrestd could not be asked";
  if (!from_file) {
    // The lifespan is what matters (each token is renewed); the current one's exp shows the
    // clock it was minted by.
    const std::string current =
        t.expires_at ? fmt::format("the current one until {}, ", formatUtc(*t.expires_at)) : "";
    return okCheck(
        name,
        fmt::format("tokens for '{}' minted from {}, each valid for {} ({}renewed when "
                    "a third is left); {}",
                    t.site_user, t.path, formatDuration(t.lifespan.count()), current, confirmed),
        details);
  }
  const std::string whose = t.subject ? fmt::format("token for '{}'", *t.subject) : "token";
  if (!t.expires_at) {
    return warnCheck(name,
                     fmt::format("the {} in {} has no exp claim, so doctor cannot tell when it "
                                 "expires; {}",
                                 whose, t.path, confirmed),
                     "issue tokens with a lifespan (`scontrol token lifespan=SECONDS`)", details);
  }
  const int64_t left = *t.expires_at - t.now_unix;
  if (left < kTokenExpiryWarning.count()) {
    return warnCheck(name,
                     fmt::format("the {} in {} expires in {} ({}); {}", whose, t.path,
                                 formatDuration(left), formatUtc(*t.expires_at), confirmed),
                     tokenFix(t), details);
  }
  return okCheck(name,
                 fmt::format("{} in {} valid for {} (until {}); {}", whose, t.path,
                             formatDuration(left), formatUtc(*t.expires_at), confirmed),
                 details);
}

}  // namespace tuneplane::doctor
