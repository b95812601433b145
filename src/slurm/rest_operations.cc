// The SlurmClient operations of SlurmRestClient: ping, submit, a job read by key (a SLUID, or
// a numeric id confirmed by it), listings, cancel, partitions and nodes — each one request
// or a few (call, rest_call.cc) and its answer decoded into typed records or a SlurmError.
#include "slurm/rest_client.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/percent_encoding.h"
#include "slurm/answer_decoder.h"
#include "slurm/job_key.h"
#include "slurm/sluid.h"
#include "slurm/token_scrub.h"

namespace tuneplane::slurm {
namespace {

using detail::scrubError;

SlurmError badResponse(const char* op, const http::HttpResponse& response, const Error& why,
                       TransportClass transport) {
  SlurmError e = makeSlurmError(kErrBadResponse, op,
                                fmt::format("cannot decode the answer (HTTP {}): {}: {}",
                                            response.status, why.field, why.message),
                                transport);
  e.http_status = response.status;
  return e;
}

}  // namespace

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

template <typename Decode>
auto SlurmRestClient::readDecoded(const SlurmApi& api, const char* op, std::string_view suffix,
                                  Decode decode)
    -> SlurmResult<typename std::invoke_result_t<Decode, const std::string&>::value_type> {
  auto exchange = call(op, "GET", api.route(suffix), "", RetryMode::kReads);
  if (!exchange) return slurmFail(exchange.error());
  auto decoded = decode(exchange->response.body);
  if (!decoded) {
    return slurmFail(
        badResponse(op, exchange->response, decoded.error(), TransportClass::kRejected));
  }
  return std::move(*decoded);
}

SlurmResult<std::vector<PartitionInfo>> SlurmRestClient::listPartitions() {
  auto api = ensureApi("list_partitions");
  if (!api) return slurmFail(api.error());
  return readDecoded(**api, "list_partitions", "/partitions/",
                     [](const std::string& body) { return decodePartitions(body); });
}

SlurmResult<std::vector<NodeInfo>> SlurmRestClient::listNodes() {
  auto api = ensureApi("list_nodes");
  if (!api) return slurmFail(api.error());
  return readDecoded(**api, "list_nodes", "/nodes/",
                     [](const std::string& body) { return decodeNodes(body); });
}

SlurmResult<ControllerConfig> SlurmRestClient::controllerConfig() {
  auto api = ensureApi("controller_config");
  if (!api) return slurmFail(api.error());
  if (!(*api)->controller_config) {
    return slurmFail(makeSlurmError(
        kErrConfUnavailable, "controller_config",
        fmt::format("REST API {} has no GET /conf (the controller's configuration)", (*api)->name),
        TransportClass::kNotSent));
  }
  return readDecoded(**api, "controller_config", "/conf",
                     [](const std::string& body) { return decodeControllerConfig(body); });
}

}  // namespace tuneplane::slurm
