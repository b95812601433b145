// See slurmdb_jobs.h. The records array is handed to simdjson a batch at a time
// (record_batches.h), whatever the answer's size: an administrator's month of records is tens
// of megabytes, and the parser's index then covers one batch, never the answer.
#include "slurm/slurmdb_jobs.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/percent_encoding.h"
#include "slurm/json_fields.h"
#include "slurm/json_spans.h"
#include "slurm/record_batches.h"
#include "slurm/record_decoders.h"
#include "slurm/rest_client.h"
#include "slurm/slurm_api.h"

namespace tuneplane::slurm {
namespace {

namespace ondemand = simdjson::ondemand;
using json_fields::eachField;
using json_fields::indexed;
using json_fields::readInt;
using json_fields::readObject;
using json_fields::readString;
using json_fields::readStrings;
using records::Failure;
using records::malformed;
using simdjson::error_code;
using simdjson::SUCCESS;

constexpr std::string_view kRecordsKey = "jobs";

// Calls `each(object)` for every object of an array; other items (and a value that is not
// an array) are validated and skipped.
template <typename Each>
error_code eachObject(ondemand::value& value, Each&& each) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type != ondemand::json_type::array) return json_fields::checkScalar(value, type);
  ondemand::array array;
  if (auto e = value.get_array().get(array)) return e;
  for (auto&& item : array) {
    ondemand::value element;
    if (auto e = std::move(item).get(element)) return e;
    if (auto e = element.type().get(type)) return e;
    if (type != ondemand::json_type::object) {
      if (auto e = json_fields::checkScalar(element, type)) return e;
      continue;
    }
    ondemand::object object;
    if (auto e = element.get_object().get(object)) return e;
    if (auto e = each(object)) return e;
  }
  return SUCCESS;
}

// tres.allocated: the `cpu` count and the GPU rule of AccountingRun::gpus.
error_code readAllocatedTres(ondemand::value& value, AccountingRun& out) {
  out.cpus = 0;
  out.gpus = 0;
  bool plain_gpu = false;
  int64_t typed_gpus = 0;
  auto e = eachObject(value, [&](ondemand::object& entry) {
    std::string type, name;
    int64_t count = 0;
    auto failed = eachField(entry, [&](std::string_view key, ondemand::value& v) {
      if (key == "type") return readString(v, type);
      if (key == "name") return readString(v, name);
      if (key == "count") return readInt(v, count);
      return SUCCESS;
    });
    if (failed) return failed;
    count = std::max<int64_t>(count, 0);  // -2 is "not measured" (energy)
    if (type == "cpu") out.cpus = count;
    if (type == "gres" && name == "gpu") {
      plain_gpu = true;
      out.gpus = count;
    } else if (type == "gres" && name.rfind("gpu:", 0) == 0) {
      typed_gpus += count;
    }
    return SUCCESS;
  });
  if (!plain_gpu) out.gpus = typed_gpus;
  return e;
}

// One record of `jobs[]`. Field names as in v0.0.45_job / v0.0.44_job (slurmdbd's).
Failure decodeRun(ondemand::object& object, AccountingRun& out) {
  bool has_job_id = false;
  std::string_view failed;
  auto e = eachField(object, [&](std::string_view key, ondemand::value& value) -> error_code {
    failed = key;
    if (key == "job_id") {
      int64_t id = 0;
      auto read = readInt(value, id);
      has_job_id = id > 0;
      out.job_id = id > 0 ? static_cast<uint64_t>(id) : 0;
      return read;
    }
    if (key == "sluid") return readString(value, out.sluid);
    if (key == "cluster") return readString(value, out.cluster);
    if (key == "user") return readString(value, out.user);
    if (key == "account") return readString(value, out.account);
    if (key == "partition") return readString(value, out.partition);
    if (key == "name") return readString(value, out.name);
    if (key == "restart_cnt") return readInt(value, out.restart_count);
    if (key == "working_directory") return readString(value, out.working_directory);
    if (key == "state") {
      out.state.clear();
      return readObject(value, [&](std::string_view k, ondemand::value& v) {
        return k == "current" ? readStrings(v, out.state) : SUCCESS;
      });
    }
    if (key == "time") {
      return readObject(value, [&](std::string_view k, ondemand::value& v) {
        if (k == "submission") return readInt(v, out.submit_time);
        if (k == "start") return readInt(v, out.start_time);
        if (k == "end") return readInt(v, out.end_time);
        if (k == "elapsed") return readInt(v, out.elapsed);
        if (k == "suspended") return readInt(v, out.suspended);
        return SUCCESS;
      });
    }
    if (key == "tres") {
      return readObject(value, [&](std::string_view k, ondemand::value& v) {
        return k == "allocated" ? readAllocatedTres(v, out) : SUCCESS;
      });
    }
    if (key == "het" || key == "array") {
      int64_t id = 0;
      auto read = readObject(value, [&](std::string_view k, ondemand::value& v) {
        return k == "job_id" ? readInt(v, id) : SUCCESS;
      });
      (key == "het" ? out.het_job_id : out.array_job_id) = id > 0 ? static_cast<uint64_t>(id) : 0;
      return read;
    }
    return SUCCESS;
  });
  if (e) return malformed(std::string(failed), e);
  if (!has_job_id) return Error{"slurm.bad_response", "job_id", "missing or not a positive number"};
  return std::nullopt;
}

simdjson::ondemand::parser& threadParser() {
  thread_local simdjson::ondemand::parser parser;
  return parser;
}

}  // namespace

std::string slurmdbJobsPath(std::string_view api_version, const SlurmdbJobsQuery& query) {
  std::string path = fmt::format("/slurmdb/{}/jobs/?", api_version);
  for (const auto& user : query.users) path += "users=" + percentEncode(user) + "&";
  path += fmt::format("start_time={}&end_time={}&show_duplicates=true&skip_steps=true",
                      query.start_time, query.end_time);
  return path;
}

Result<std::vector<AccountingRun>> decodeSlurmdbJobs(AnswerBytes answer,
                                                     const DecodeOptions& options) {
  std::string_view text = answer.text();
  simdjson::padded_string copy;
  if (!answer.padded()) {
    copy = simdjson::padded_string(text);
    text = std::string_view(copy.data(), copy.size());
  }
  // Slurm's own refusal inside a 200 answer: its first error, as the client reports others.
  auto errors = decodeMessages(AnswerBytes::withPadding(text), "errors", options);
  if (!errors) return tl::unexpected(errors.error());
  if (!errors->empty()) {
    const SlurmMessage& first = errors->front();
    return fail(
        std::string(kErrRejected), "errors[0]",
        fmt::format("slurmdbd refused the query: {} (error {}){}", first.error, first.error_number,
                    first.description.empty() ? "" : " — " + first.description));
  }
  std::vector<AccountingRun> runs;
  bool found = false;
  auto members = objectMembers(text, kRecordsKey, [&](size_t begin) -> Result<size_t> {
    found = true;
    runs.clear();
    return forEachRecordInBatches(
        text, begin, kRecordsKey, std::max<size_t>(options.batch_bytes, 64), threadParser(),
        [&](ondemand::object* record, size_t index) -> std::optional<Error> {
          if (record == nullptr) {
            return Error{"slurm.bad_response", indexed(kRecordsKey, index), "not an object"};
          }
          // A record a batch cut short fails here and is decoded again from the next batch:
          // what it left must go.
          runs.emplace_back();
          if (auto failure = decodeRun(*record, runs.back())) {
            runs.pop_back();
            failure->field = indexed(kRecordsKey, index) + "." + failure->field;
            return failure;
          }
          return std::nullopt;
        });
  });
  if (!members) {
    Error error = members.error();
    if (error.field.empty()) error.field = std::string(kRecordsKey);
    return tl::unexpected(std::move(error));
  }
  if (!found) return records::badResponse(std::string(kRecordsKey), "missing array");
  return runs;
}

bool isMissingRoute(const SlurmError& error) {
  return error.http_status == 404 && error.slurm_error_number == 0;
}

namespace {

// GET the /slurmdb/ path `path_of(version)` and decode its job records.
template <typename PathOf>
SlurmResult<std::vector<AccountingRun>> readRuns(SlurmRestClient& client, const char* op,
                                                 PathOf&& path_of) {
  auto chosen = client.negotiate();
  if (!chosen) return slurmFail(chosen.error());
  const std::string path = path_of(chosen->api->name);
  auto body = client.readPath(op, path);
  if (!body) {
    SlurmError e = std::move(body.error());
    if (isMissingRoute(e)) {
      e.error.code = std::string(kErrAccountingUnavailable);
      e.error.message = fmt::format(
          "slurmrestd has no {} routes (HTTP 404): accounting is not available — the site has "
          "no slurmdbd, or its slurmrestd does not load openapi/slurmdbd",
          fmt::format("/slurmdb/{}/", chosen->api->name));
    }
    return slurmFail(std::move(e));
  }
  auto runs = decodeSlurmdbJobs(*body);
  if (!runs) {
    const bool refused = runs.error().code == kErrRejected;
    SlurmError e =
        makeSlurmError(refused ? kErrRejected : kErrBadResponse, op,
                       runs.error().field + ": " + runs.error().message, TransportClass::kRejected);
    e.http_status = 200;
    return slurmFail(std::move(e));
  }
  return std::move(*runs);
}

}  // namespace

SlurmResult<std::vector<AccountingRun>> readSlurmdbJobs(SlurmRestClient& client,
                                                        const SlurmdbJobsQuery& query) {
  return readRuns(client, "slurmdb_jobs",
                  [&](std::string_view version) { return slurmdbJobsPath(version, query); });
}

SlurmResult<std::vector<AccountingRun>> readSlurmdbJob(SlurmRestClient& client, uint64_t job_id) {
  return readRuns(client, "slurmdb_job", [&](std::string_view version) {
    return fmt::format("/slurmdb/{}/job/{}", version, job_id);
  });
}

}  // namespace tuneplane::slurm
