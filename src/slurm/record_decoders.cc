#include "slurm/record_decoders.h"

#include <array>
#include <charconv>
#include <string>

#include "slurm/json_fields.h"

namespace tuneplane::slurm::records {
namespace {

using json_fields::checkScalar;
using json_fields::eachField;
using json_fields::eachString;
using json_fields::KeyIndex;
using json_fields::rawKey;
using json_fields::readBool;
using json_fields::readExitCode;
using json_fields::readInt;
using json_fields::readNoVal;
using json_fields::readObject;
using json_fields::readString;
using json_fields::readStrings;
using json_fields::stringView;
using simdjson::error_code;
using simdjson::SUCCESS;
using Type = ondemand::json_type;

Error bad(std::string field, std::string message) {
  return Error{"slurm.bad_response", std::move(field), std::move(message)};
}

// eachField that names the field in which an error happened.
template <typename Read>
Failure forEachField(ondemand::object& object, Read&& read) {
  std::string_view failed;
  auto e = eachField(object, [&](std::string_view key, ondemand::value& value) {
    failed = key;
    return read(key, value);
  });
  if (e) return malformed(std::string(failed), e);
  return std::nullopt;
}

// The fields of a JobRecord, in the order of kJobKeys.
enum JobKey {
  kJobId,
  kStepId,
  kSluid,
  kName,
  kComment,
  kPartition,
  kFeatures,
  kAccount,
  kQos,
  kUserName,
  kJobState,
  kStateReason,
  kStateDescription,
  kExitCode,
  kDerivedExitCode,
  kHetJobId,
  kHetJobOffset,
  kNodes,
  kBatchHost,
  kNodeCount,
  kCpus,
  kCpusPerTask,
  kMemoryPerNode,
  kMemoryPerCpu,
  kSubmitTime,
  kStartTime,
  kEndTime,
  kPreemptTime,
  kTimeLimit,
  kStandardOutput,
  kStandardError,
  kStdoutExpanded,
  kStderrExpanded,
  kCurrentWorkingDirectory,
  kTresPerNode,
  kTresAllocStr,
  kGresDetail,
  kFlags,
  kRequeue,
  kHold,
  kRestartCnt,
  kPriority,
};

const KeyIndex kJobKeys{
    "job_id",
    "step_id",
    "sluid",
    "name",
    "comment",
    "partition",
    "features",
    "account",
    "qos",
    "user_name",
    "job_state",
    "state_reason",
    "state_description",
    "exit_code",
    "derived_exit_code",
    "het_job_id",
    "het_job_offset",
    "nodes",
    "batch_host",
    "node_count",
    "cpus",
    "cpus_per_task",
    "memory_per_node",
    "memory_per_cpu",
    "submit_time",
    "start_time",
    "end_time",
    "preempt_time",
    "time_limit",
    "standard_output",
    "standard_error",
    "stdout_expanded",
    "stderr_expanded",
    "current_working_directory",
    "tres_per_node",
    "tres_alloc_str",
    "gres_detail",
    "flags",
    "requeue",
    "hold",
    "restart_cnt",
    "priority",
};

// step_id.sluid; anything but an object gives "".
error_code readStepSluid(ondemand::value& value, std::string& out) {
  out.clear();
  return readObject(value, [&](std::string_view key, ondemand::value& member) {
    return key == "sluid" ? readString(member, out) : SUCCESS;
  });
}

error_code readJobField(int key, ondemand::value& v, JobRecord& job, NoValNumber& job_id,
                        bool& has_job_id, std::string& top_sluid) {
  switch (key) {
    case kJobId:
      has_job_id = true;
      return readNoVal(v, job_id);
    case kStepId:
      return readStepSluid(v, job.sluid);
    case kSluid:
      return readString(v, top_sluid);
    case kName:
      return readString(v, job.name);
    case kComment:
      return readString(v, job.comment);
    case kPartition:
      return readString(v, job.partition);
    case kFeatures:
      return readString(v, job.features);
    case kAccount:
      return readString(v, job.account);
    case kQos:
      return readString(v, job.qos);
    case kUserName:
      return readString(v, job.user_name);
    case kJobState:
      return readStrings(v, job.job_state);
    case kStateReason:
      return readString(v, job.state_reason);
    case kStateDescription:
      return readString(v, job.state_description);
    case kExitCode:
      return readExitCode(v, job.exit_code);
    case kDerivedExitCode:
      return readExitCode(v, job.derived_exit_code);
    case kHetJobId:
      return readNoVal(v, job.het_job_id);
    case kHetJobOffset:
      return readNoVal(v, job.het_job_offset);
    case kNodes:
      return readString(v, job.nodes);
    case kBatchHost:
      return readString(v, job.batch_host);
    case kNodeCount:
      return readNoVal(v, job.node_count);
    case kCpus:
      return readNoVal(v, job.cpus);
    case kCpusPerTask:
      return readNoVal(v, job.cpus_per_task);
    case kMemoryPerNode:
      return readNoVal(v, job.memory_per_node);
    case kMemoryPerCpu:
      return readNoVal(v, job.memory_per_cpu);
    case kSubmitTime:
      return readNoVal(v, job.submit_time);
    case kStartTime:
      return readNoVal(v, job.start_time);
    case kEndTime:
      return readNoVal(v, job.end_time);
    case kPreemptTime:
      return readNoVal(v, job.preempt_time);
    case kTimeLimit:
      return readNoVal(v, job.time_limit);
    case kStandardOutput:
      return readString(v, job.standard_output);
    case kStandardError:
      return readString(v, job.standard_error);
    case kStdoutExpanded:
      return readString(v, job.stdout_expanded);
    case kStderrExpanded:
      return readString(v, job.stderr_expanded);
    case kCurrentWorkingDirectory:
      return readString(v, job.current_working_directory);
    case kTresPerNode:
      return readString(v, job.tres_per_node);
    case kTresAllocStr:
      return readString(v, job.tres_alloc_str);
    case kGresDetail:
      return readStrings(v, job.gres_detail);
    case kFlags:
      return readStrings(v, job.flags);
    case kRequeue:
      return readBool(v, job.requeue);
    case kHold:
      return readBool(v, job.hold);
    case kRestartCnt:
      return readInt(v, job.restart_cnt);
    case kPriority:
      return readNoVal(v, job.priority);
    default:
      return SUCCESS;  // a field the control plane does not need
  }
}

}  // namespace

Error malformed(std::string field, simdjson::error_code code) {
  return Error{"slurm.bad_response", std::move(field),
               std::string("malformed JSON: ") + simdjson::error_message(code)};
}

tl::unexpected<Error> badResponse(std::string field, std::string message) {
  return fail("slurm.bad_response", std::move(field), std::move(message));
}

Failure decodeJobRecord(ondemand::object& object, JobRecord& out) {
  NoValNumber job_id;
  bool has_job_id = false;
  std::string top_sluid;
  auto read = forEachField(object, [&](std::string_view key, ondemand::value& value) {
    return readJobField(kJobKeys.find(key), value, out, job_id, has_job_id, top_sluid);
  });
  if (read) return read;
  if (!has_job_id) return bad("job_id", "missing");
  auto id = job_id.value();
  if (!id || *id < 0) return bad("job_id", "not a set number");
  out.job_id = static_cast<uint64_t>(*id);
  if (out.sluid.empty()) out.sluid = std::move(top_sluid);  // in case a release moves it up
  return {};
}

Failure decodeJobStateEntry(ondemand::object& object, JobStateList& out) {
  // Written out rather than through forEachField: two fields per record and ten thousand
  // records a poll, where the generic loop's extra copies of simdjson's iterator showed up as
  // a third of the decoding time. The value is read through simdjson's result as it comes:
  // copying it into an ondemand::value first stalled on two store forwards per field, half of
  // this function's time. Nothing here allocates or copies for a usual entry: the id stays a
  // view into the answer, the state names become their compact form as they are read.
  bool has_id = false;
  std::string_view job_id;
  std::array<char, 24> number_text;  // a numeric job_id's digits
  JobStateNames names;
  for (auto&& field : object) {
    ondemand::raw_json_string key;
    if (auto e = field.key().get(key)) return malformed("", e);
    auto value = field.value();
    if (auto e = value.error()) return malformed("", e);
    if (key == "state") {
      names.clear();  // a repeated key: the last one counts
      auto e = eachString(value, [&](std::string_view name) { names.add(name); });
      if (e) return malformed("state", e);
    } else if (key == "job_id") {
      auto e = stringView(value, job_id);
      has_id = e == SUCCESS;
      if (e == simdjson::INCORRECT_TYPE) {  // a number: accepted too
        NoValNumber number;
        e = readNoVal(value.value_unsafe(), number);
        has_id = number.value().has_value();
        if (has_id) {
          const char* end = std::to_chars(number_text.data(),
                                          number_text.data() + number_text.size(), *number.value())
                                .ptr;
          job_id = {number_text.data(), static_cast<size_t>(end - number_text.data())};
        }
      }
      if (e) return malformed("job_id", e);
    }
  }
  if (!has_id) return bad("job_id", "missing");
  uint64_t numeric_id = 0;
  std::optional<uint32_t> het_offset;
  if (const char* why = splitJobStateId(job_id, numeric_id, het_offset)) {
    return bad("job_id", std::string(why) + ": \"" + std::string(job_id) + "\"");
  }
  out.add(job_id, numeric_id, het_offset, names);
  return std::nullopt;
}

Failure decodeMessage(ondemand::object& object, SlurmMessage& out) {
  return forEachField(object, [&](std::string_view key, ondemand::value& value) {
    if (key == "error_number") {
      int64_t number = 0;
      auto e = readInt(value, number);
      out.error_number = static_cast<int>(number);
      return e;
    }
    if (key == "error") return readString(value, out.error);
    if (key == "description") return readString(value, out.description);
    if (key == "source") return readString(value, out.source);
    return SUCCESS;
  });
}

Failure decodeCancelEntry(ondemand::object& object, SlurmMessage& out, bool& refused) {
  bool has_error = false;
  auto read = forEachField(object, [&](std::string_view key, ondemand::value& value) {
    if (key == "step_id") return readString(value, out.source);
    if (key != "error") return SUCCESS;
    out.error_number = 0;
    out.error.clear();
    out.description.clear();
    Type type;
    if (auto e = value.type().get(type)) return e;
    has_error = type == Type::object;
    return readObject(value, [&](std::string_view k, ondemand::value& v) {
      if (k == "code") {
        int64_t code = 0;
        auto e = readInt(v, code);
        out.error_number = static_cast<int>(code);
        return e;
      }
      if (k == "string") return readString(v, out.error);
      if (k == "message") return readString(v, out.description);
      return SUCCESS;
    });
  });
  refused = has_error && out.error_number != 0;
  return read;
}

Failure decodeControllerPing(ondemand::object& object, ControllerPing& out) {
  return forEachField(object, [&](std::string_view key, ondemand::value& value) {
    if (key == "hostname") return readString(value, out.hostname);
    if (key == "responding") return readBool(value, out.responding);
    if (key == "primary") return readBool(value, out.primary);
    if (key == "latency") return readInt(value, out.latency_us);
    if (key == "status") return readString(value, out.status);
    return SUCCESS;
  });
}

Failure decodePartitionInfo(ondemand::object& object, PartitionInfo& out) {
  return forEachField(object, [&](std::string_view key, ondemand::value& value) {
    if (key == "name") return readString(value, out.name);
    if (key == "nodes") {
      out.nodes.clear();
      out.total_nodes = 0;
      return readObject(value, [&](std::string_view k, ondemand::value& v) {
        if (k == "configured") return readString(v, out.nodes);
        if (k == "total") return readInt(v, out.total_nodes);
        return SUCCESS;
      });
    }
    if (key == "cpus") {
      out.total_cpus = 0;
      return readObject(value, [&](std::string_view k, ondemand::value& v) {
        return k == "total" ? readInt(v, out.total_cpus) : SUCCESS;
      });
    }
    if (key == "grace_time") {
      int64_t seconds = 0;
      if (const auto failed = readInt(value, seconds); failed != SUCCESS) return failed;
      out.grace_time = seconds;
      return SUCCESS;
    }
    if (key == "preempt_mode") {
      std::vector<std::string> modes;
      if (const auto failed = readStrings(value, modes); failed != SUCCESS) return failed;
      out.preempt_mode = std::move(modes);
      return SUCCESS;
    }
    if (key == "partition") {
      out.state.clear();
      return readObject(value, [&](std::string_view k, ondemand::value& v) {
        return k == "state" ? readStrings(v, out.state) : SUCCESS;
      });
    }
    return SUCCESS;
  });
}

Failure decodeNodeInfo(ondemand::object& object, NodeInfo& out) {
  return forEachField(object, [&](std::string_view key, ondemand::value& value) {
    if (key == "name") return readString(value, out.name);
    if (key == "state") return readStrings(value, out.state);
    if (key == "features") return readStrings(value, out.features);
    if (key == "active_features") return readStrings(value, out.active_features);
    if (key == "partitions") return readStrings(value, out.partitions);
    if (key == "gres") return readString(value, out.gres);
    if (key == "cpus") return readInt(value, out.cpus);
    if (key == "real_memory") return readInt(value, out.real_memory_mb);
    if (key == "reason") return readString(value, out.reason);
    return SUCCESS;
  });
}

Failure readMessages(ondemand::value& value, std::vector<SlurmMessage>& out) {
  out.clear();
  Type type;
  if (auto e = value.type().get(type)) return malformed("", e);
  if (type != Type::array) {
    if (auto e = checkScalar(value, type)) return malformed("", e);
    return {};
  }
  ondemand::array array;
  if (auto e = value.get_array().get(array)) return malformed("", e);
  size_t index = 0;
  for (auto item : array) {
    std::string where = "[" + std::to_string(index++) + "]";
    ondemand::value element;
    if (auto e = std::move(item).get(element)) return malformed(where, e);
    Type element_type;
    if (auto e = element.type().get(element_type)) return malformed(where, e);
    if (element_type != Type::object) {
      if (auto e = checkScalar(element, element_type)) return malformed(where, e);
      continue;
    }
    ondemand::object object;
    if (auto e = element.get_object().get(object)) return malformed(where, e);
    SlurmMessage message;
    if (auto failure = decodeMessage(object, message)) {
      failure->field = where + (failure->field.empty() ? "" : "." + failure->field);
      return failure;
    }
    out.push_back(std::move(message));
  }
  return {};
}

}  // namespace tuneplane::slurm::records
