// The nlohmann-based decoder that src/slurm/job_record.cc had before the simdjson decoder
// (answer_decoder.h) replaced it, kept verbatim as the reference the equivalence test compares
// the new decoder with on every transcript answer. Test-only; not built into the product.
#pragma once

#include <charconv>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/job_record.h"
#include "slurm/job_state_list.h"

namespace tuneplane::slurm::reference {

using nlohmann::json;

inline NoValNumber decodeNoVal(const json& value);
inline std::vector<SlurmMessage> decodeMessages(const json& body, const char* key);

using nlohmann::json;

inline tl::unexpected<Error> bad(std::string field, std::string message) {
  return fail("slurm.bad_response", std::move(field), std::move(message));
}

// Missing keys and nulls decode as empty values: slurmrestd omits what is unset.
inline std::string str(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

inline NoValNumber noval(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? NoValNumber{} : decodeNoVal(*it);
}

inline bool boolean(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

inline int64_t integer(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return 0;
  return decodeNoVal(*it).value().value_or(0);
}

// An array of strings; a CSV string (v0.0.45's csv_string is an array, older ones a string)
// is split on commas.
inline std::vector<std::string> strings(const json& object, const char* key) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end()) return out;
  if (it->is_array()) {
    out.reserve(it->size());
    for (const auto& item : *it) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
  } else if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    size_t start = 0;
    while (start <= text.size() && !text.empty()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      if (comma > start) out.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return out;
}

inline ExitCode exitCode(const json& object, const char* key) {
  ExitCode out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_object()) return out;
  out.status = strings(*it, "status");
  out.return_code = noval(*it, "return_code");
  auto signal = it->find("signal");
  if (signal != it->end() && signal->is_object()) {
    out.signal_id = noval(*signal, "id");
    out.signal_name = str(*signal, "name");
  }
  return out;
}

inline Result<uint64_t> parseUint(std::string_view text, const char* field) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return bad(field, "not an unsigned number: \"" + std::string(text) + "\"");
  }
  return value;
}

inline Result<const json*> arrayAt(const json& body, const char* key) {
  if (!body.is_object()) return bad(key, "the answer is not a JSON object");
  auto it = body.find(key);
  if (it == body.end() || !it->is_array()) return bad(key, "missing array");
  return &*it;
}

inline NoValNumber decodeNoVal(const json& value) {
  NoValNumber out;
  if (value.is_number_integer()) {
    out.set = true;
    out.number = value.get<int64_t>();
  } else if (value.is_number_float()) {
    out.set = true;
    out.number = static_cast<int64_t>(value.get<double>());
  } else if (value.is_object()) {
    out.set = boolean(value, "set");
    out.infinite = boolean(value, "infinite");
    auto number = value.find("number");
    if (number != value.end()) {
      if (number->is_number_integer()) {
        out.number = number->get<int64_t>();
      } else if (number->is_number_float()) {
        out.number = static_cast<int64_t>(number->get<double>());
      }
    }
  }
  return out;
}

inline Result<JobRecord> decodeJobRecord(const json& record) {
  if (!record.is_object()) return bad("jobs[]", "a job record is not an object");
  JobRecord job;
  auto id = record.find("job_id");
  if (id == record.end()) return bad("job_id", "missing");
  auto id_value = decodeNoVal(*id).value();
  if (!id_value || *id_value < 0) return bad("job_id", "not a set number");
  job.job_id = static_cast<uint64_t>(*id_value);
  auto step = record.find("step_id");
  if (step != record.end() && step->is_object()) job.sluid = str(*step, "sluid");
  if (job.sluid.empty()) job.sluid = str(record, "sluid");  // in case a release moves it up
  job.name = str(record, "name");
  job.comment = str(record, "comment");
  job.partition = str(record, "partition");
  job.features = str(record, "features");
  job.account = str(record, "account");
  job.qos = str(record, "qos");
  job.user_name = str(record, "user_name");
  job.job_state = strings(record, "job_state");
  job.state_reason = str(record, "state_reason");
  job.state_description = str(record, "state_description");
  job.exit_code = exitCode(record, "exit_code");
  job.derived_exit_code = exitCode(record, "derived_exit_code");
  job.het_job_id = noval(record, "het_job_id");
  job.het_job_offset = noval(record, "het_job_offset");
  job.nodes = str(record, "nodes");
  job.batch_host = str(record, "batch_host");
  job.node_count = noval(record, "node_count");
  job.cpus = noval(record, "cpus");
  job.cpus_per_task = noval(record, "cpus_per_task");
  job.memory_per_node = noval(record, "memory_per_node");
  job.memory_per_cpu = noval(record, "memory_per_cpu");
  job.submit_time = noval(record, "submit_time");
  job.start_time = noval(record, "start_time");
  job.end_time = noval(record, "end_time");
  job.preempt_time = noval(record, "preempt_time");
  job.time_limit = noval(record, "time_limit");
  job.standard_output = str(record, "standard_output");
  job.standard_error = str(record, "standard_error");
  job.stdout_expanded = str(record, "stdout_expanded");
  job.stderr_expanded = str(record, "stderr_expanded");
  job.current_working_directory = str(record, "current_working_directory");
  job.tres_per_node = str(record, "tres_per_node");
  job.tres_alloc_str = str(record, "tres_alloc_str");
  job.gres_detail = strings(record, "gres_detail");
  job.flags = strings(record, "flags");
  job.requeue = boolean(record, "requeue");
  job.hold = boolean(record, "hold");
  job.restart_cnt = integer(record, "restart_cnt");
  job.priority = noval(record, "priority");
  return job;
}

inline Result<std::vector<JobRecord>> decodeJobs(const json& body) {
  auto jobs = arrayAt(body, "jobs");
  if (!jobs) return tl::unexpected(jobs.error());
  std::vector<JobRecord> out;
  out.reserve((*jobs)->size());
  for (const auto& record : **jobs) {
    auto job = decodeJobRecord(record);
    if (!job) return tl::unexpected(job.error());
    out.push_back(std::move(*job));
  }
  return out;
}

inline Result<JobListing> decodeJobListing(const json& body) {
  auto jobs = decodeJobs(body);
  if (!jobs) return tl::unexpected(jobs.error());
  JobListing out;
  out.jobs = std::move(*jobs);
  out.last_update = noval(body, "last_update");
  out.warnings = decodeMessages(body, "warnings");
  for (const auto& w : out.warnings) {
    if (w.description.find("No job changes") != std::string::npos) out.unchanged = true;
  }
  return out;
}

// A `/jobs/state/` entry as the old decoder kept it: the id's text and parts, the state's
// names.
struct StateEntry {
  std::string job_id;
  uint64_t numeric_id = 0;
  std::optional<uint32_t> het_offset;
  std::vector<std::string> state;
  bool operator==(const StateEntry&) const = default;
};

inline Result<std::vector<StateEntry>> decodeJobStates(const json& body) {
  auto jobs = arrayAt(body, "jobs");
  if (!jobs) return tl::unexpected(jobs.error());
  std::vector<StateEntry> out;
  out.reserve((*jobs)->size());
  for (const auto& item : **jobs) {
    if (!item.is_object()) return bad("jobs[]", "not an object");
    auto id = item.find("job_id");
    StateEntry entry;
    if (id != item.end() && id->is_string()) {
      entry.job_id = id->get_ref<const std::string&>();
    } else if (id != item.end() && decodeNoVal(*id).value()) {
      entry.job_id = std::to_string(*decodeNoVal(*id).value());
    } else {
      return bad("jobs[].job_id", "missing");
    }
    if (const char* why = splitJobStateId(entry.job_id, entry.numeric_id, entry.het_offset)) {
      return bad("jobs[].job_id", std::string(why) + ": \"" + entry.job_id + "\"");
    }
    entry.state = strings(item, "state");
    out.push_back(std::move(entry));
  }
  return out;
}

// The new decoder's compact list in the old form, through its public reads.
inline Result<std::vector<StateEntry>> plain(const Result<JobStateList>& list) {
  if (!list) return tl::unexpected(list.error());
  std::vector<StateEntry> out;
  for (size_t i = 0; i < list->size(); ++i) {
    const JobStateEntry& entry = (*list)[i];
    out.push_back({list->jobId(i), entry.numericId(), entry.hetOffset(), list->stateNames(i)});
  }
  return out;
}

inline std::vector<SlurmMessage> decodeMessages(const json& body, const char* key) {
  std::vector<SlurmMessage> out;
  if (!body.is_object()) return out;
  auto it = body.find(key);
  if (it == body.end() || !it->is_array()) return out;
  for (const auto& item : *it) {
    if (!item.is_object()) continue;
    SlurmMessage m;
    m.error_number = static_cast<int>(integer(item, "error_number"));
    m.error = str(item, "error");
    m.description = str(item, "description");
    m.source = str(item, "source");
    out.push_back(std::move(m));
  }
  return out;
}

inline std::vector<SlurmMessage> decodeCancelStatus(const json& body) {
  std::vector<SlurmMessage> out;
  if (!body.is_object()) return out;
  auto it = body.find("status");
  if (it == body.end() || !it->is_array()) return out;
  for (const auto& item : *it) {
    if (!item.is_object()) continue;
    auto error = item.find("error");
    if (error == item.end() || !error->is_object()) continue;
    SlurmMessage m;
    m.error_number = static_cast<int>(integer(*error, "code"));
    m.error = str(*error, "string");
    m.description = str(*error, "message");
    m.source = str(item, "step_id");
    if (m.error_number != 0) out.push_back(std::move(m));
  }
  return out;
}

inline Result<SubmitReceipt> decodeSubmitReceipt(const json& body) {
  if (!body.is_object()) return bad("job_id", "the answer is not a JSON object");
  SubmitReceipt out;
  auto id = body.find("job_id");
  if (id == body.end()) return bad("job_id", "missing from the receipt");
  auto value = decodeNoVal(*id).value();
  if (!value && id->is_string()) {
    auto parsed = parseUint(id->get_ref<const std::string&>(), "job_id");
    if (parsed) value = static_cast<int64_t>(*parsed);
  }
  if (!value || *value <= 0) return bad("job_id", "not a positive number");
  out.job_id = static_cast<uint64_t>(*value);
  auto step = body.find("step_id");
  if (step != body.end()) {
    out.step_id = step->is_string() ? step->get<std::string>() : step->dump();
  }
  out.job_submit_user_msg = str(body, "job_submit_user_msg");
  out.warnings = decodeMessages(body, "warnings");
  out.errors = decodeMessages(body, "errors");
  return out;
}

inline Result<PingResult> decodePing(const json& body) {
  auto pings = arrayAt(body, "pings");
  if (!pings) return tl::unexpected(pings.error());
  PingResult out;
  for (const auto& p : **pings) {
    if (!p.is_object()) return bad("pings[]", "not an object");
    ControllerPing c;
    c.hostname = str(p, "hostname");
    c.responding = boolean(p, "responding");
    c.primary = boolean(p, "primary");
    c.latency_us = integer(p, "latency");
    c.status = str(p, "status");
    out.controllers.push_back(std::move(c));
  }
  auto meta = body.find("meta");
  if (meta != body.end() && meta->is_object()) {
    auto slurm = meta->find("slurm");
    if (slurm != meta->end() && slurm->is_object()) {
      out.release = str(*slurm, "release");
      out.cluster = str(*slurm, "cluster");
    }
    auto plugin = meta->find("plugin");
    if (plugin != meta->end() && plugin->is_object()) {
      out.data_parser = str(*plugin, "data_parser");
    }
  }
  return out;
}

inline Result<std::vector<PartitionInfo>> decodePartitions(const json& body) {
  auto parts = arrayAt(body, "partitions");
  if (!parts) return tl::unexpected(parts.error());
  std::vector<PartitionInfo> out;
  for (const auto& p : **parts) {
    if (!p.is_object()) return bad("partitions[]", "not an object");
    PartitionInfo info;
    info.name = str(p, "name");
    auto nodes = p.find("nodes");
    if (nodes != p.end() && nodes->is_object()) {
      info.nodes = str(*nodes, "configured");
      info.total_nodes = integer(*nodes, "total");
    }
    auto cpus = p.find("cpus");
    if (cpus != p.end() && cpus->is_object()) info.total_cpus = integer(*cpus, "total");
    auto partition = p.find("partition");
    if (partition != p.end() && partition->is_object()) info.state = strings(*partition, "state");
    if (p.contains("grace_time")) info.grace_time = integer(p, "grace_time");
    if (p.contains("preempt_mode")) info.preempt_mode = strings(p, "preempt_mode");
    out.push_back(std::move(info));
  }
  return out;
}

inline Result<std::vector<NodeInfo>> decodeNodes(const json& body) {
  auto nodes = arrayAt(body, "nodes");
  if (!nodes) return tl::unexpected(nodes.error());
  std::vector<NodeInfo> out;
  for (const auto& n : **nodes) {
    if (!n.is_object()) return bad("nodes[]", "not an object");
    NodeInfo info;
    info.name = str(n, "name");
    info.state = strings(n, "state");
    info.features = strings(n, "features");
    info.active_features = strings(n, "active_features");
    info.partitions = strings(n, "partitions");
    info.gres = str(n, "gres");
    info.cpus = integer(n, "cpus");
    info.real_memory_mb = integer(n, "real_memory");
    info.reason = str(n, "reason");
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace tuneplane::slurm::reference
