// See slurmdb_ledger.h.
#include "sim/slurmdb_ledger.h"

#include <algorithm>
#include <csignal>
#include <cstring>

#include "sim/cluster.h"
#include "sim/job_record.h"
#include "sim/sluid.h"

namespace tuneplane::sim {
namespace {

using nlohmann::json;

// A real record of GET /slurmdb/v0.0.45/jobs/ (21_slurmdb_jobs: bob's GPU job, steps
// included), whose values are replaced; v0.0.44's differs only as v0044Shape says.
constexpr const char* kRecordTemplate =
    R"J({"account":"team-b","comment":{"administrator":"","job":"","system":""},"allocation_node)J"
    R"J(s":1,"array":{"job_id":0,"limits":{"max":{"running":{"tasks":0}}},"task_id":{"set":false)J"
    R"J(,"infinite":false,"number":0},"task":""},"association":{"account":"","cluster":"tp","par)J"
    R"J(tition":"","user":"","id":10},"block":"","cluster":"tp","constraints":"h100","container")J"
    R"J(:"","sluid":"s4JXM98E14NB00","derived_exit_code":{"status":["SUCCESS"],"return_code":{"s)J"
    R"J(et":true,"infinite":false,"number":0},"signal":{"id":{"set":false,"infinite":false,"numb)J"
    R"J(er":0},"name":""}},"time":{"elapsed":4,"eligible":1796653224,"end":1796653228,"planned":)J"
    R"J({"set":true,"infinite":false,"number":0},"start":1796653224,"submission":1796653224,"sus)J"
    R"J(pended":0,"system":{"seconds":0,"microseconds":0},"limit":{"set":true,"infinite":false,")J"
    R"J(number":5},"total":{"seconds":0,"microseconds":0},"user":{"seconds":0,"microseconds":0}})J"
    R"J(,"exclusive":"NO","exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"infinite")J"
    R"J(:false,"number":0},"signal":{"id":{"set":false,"infinite":false,"number":0},"name":""}},)J"
    R"J("extra":"","failed_node":"","flags":["STARTED_ON_SCHEDULE","START_RECEIVED"],"group":"bo)J"
    R"J(b","het":{"job_id":0,"job_offset":{"set":false,"infinite":false,"number":0}},"job_id":8,)J"
    R"J("name":"acct-gpu","licenses":"","mcs":{"label":""},"nodes":"gpu1","oversubscribe":"NO",")J"
    R"J(partition":"gpu","hold":false,"priority":{"set":true,"infinite":false,"number":1},"qos":)J"
    R"J("normal","qosreq":"","required":{"CPUs":1,"memory_per_cpu":{"set":true,"infinite":false,)J"
    R"J("number":100},"memory_per_node":{"set":false,"infinite":false,"number":0}},"kill_request)J"
    R"J(_user":"","restart_cnt":0,"reservation":{"id":0,"name":"","requested":""},"script":"","s)J"
    R"J(egment_size":0,"original_sluid":"s4JXM98E14NB00","stdin_expanded":"","stdout_expanded":")J"
    R"J(/shared/rec44/bob/acct-gpu-8.out","stderr_expanded":"/shared/rec44/bob/acct-gpu-8.err",")J"
    R"J(stdout":"/shared/rec44/bob/%x-%j.out","stderr":"/shared/rec44/bob/%x-%j.err","stdin":"",)J"
    R"J("state":{"current":["COMPLETED"],"reason":"None"},"steps":[{"time":{"elapsed":4,"end":{")J"
    R"J(set":true,"infinite":false,"number":1796653228},"start":{"set":true,"infinite":false,"nu)J"
    R"J(mber":1796653224},"suspended":0,"system":{"seconds":0,"microseconds":3235},"limit":{"set)J"
    R"J(":false,"infinite":true,"number":0},"total":{"seconds":0,"microseconds":4917},"user":{"s)J"
    R"J(econds":0,"microseconds":1682}},"exit_code":{"status":["SUCCESS"],"return_code":{"set":t)J"
    R"J(rue,"infinite":false,"number":0},"signal":{"id":{"set":false,"infinite":false,"number":0)J"
    R"J(},"name":""}},"nodes":{"count":1,"range":"gpu1","list":["gpu1"]},"tasks":{"count":1},"CP)J"
    R"J(U":{"requested_frequency":{"min":{"set":true,"infinite":false,"number":0},"max":{"set":t)J"
    R"J(rue,"infinite":false,"number":0}},"governor":"0"},"kill_request_user":"","state":["COMPL)J"
    R"J(ETED"],"statistics":{"CPU":{"actual_frequency":0},"energy":{"consumed":{"set":true,"infi)J"
    R"J(nite":false,"number":0}}},"step":{"id":"8.batch","name":"batch","stderr":"","stdin":"",")J"
    R"J(stdout":"","stderr_expanded":"","stdin_expanded":"","stdout_expanded":""},"submit_line":)J"
    R"J("","task":{"distribution":"Unknown"},"tres":{"requested":{"max":[],"min":[],"average":[{)J"
    R"J("type":"energy","name":"","id":3,"count":0}],"total":[{"type":"energy","name":"","id":3,)J"
    R"J("count":0}]},"consumed":{"max":[],"min":[],"average":[{"type":"energy","name":"","id":3,)J"
    R"J("count":0}],"total":[{"type":"energy","name":"","id":3,"count":0}]},"allocated":[{"type")J"
    R"J(:"cpu","name":"","id":1,"count":1},{"type":"mem","name":"","id":2,"count":100},{"type":")J"
    R"J(node","name":"","id":4,"count":1},{"type":"gres","name":"gpu","id":1001,"count":1}]}}],")J"
    R"J(submit_line":"","tres":{"allocated":[{"type":"cpu","name":"","id":1,"count":1},{"type":")J"
    R"J(mem","name":"","id":2,"count":100},{"type":"energy","name":"","id":3,"count":-2},{"type")J"
    R"J(:"node","name":"","id":4,"count":1},{"type":"billing","name":"","id":5,"count":1},{"type)J"
    R"J(":"gres","name":"gpu","id":1001,"count":1}],"requested":[{"type":"cpu","name":"","id":1,)J"
    R"J("count":1},{"type":"mem","name":"","id":2,"count":100},{"type":"node","name":"","id":4,")J"
    R"J(count":1},{"type":"billing","name":"","id":5,"count":1},{"type":"gres","name":"gpu","id")J"
    R"J(:1001,"count":1}]},"used_gres":"","user":"bob","wckey":{"wckey":"","flags":[]},"working_)J"
    R"J(directory":"/shared/rec44/bob"})J";

const json& recordTemplate() {
  static const json parsed = json::parse(kRecordTemplate);
  return parsed;
}

// v0.0.44's record: no SLUIDs, no exclusive/oversubscribe, steps with `pid`, no submit_line.
void v0044Shape(json& record) {
  for (const char* key : {"sluid", "original_sluid", "exclusive", "oversubscribe"}) {
    record.erase(key);
  }
  for (auto& step : record["steps"]) {
    step.erase("submit_line");
    step["pid"] = "";
  }
}

std::string signalName(int sig) {
  const char* abbrev = sig > 0 ? sigabbrev_np(sig) : nullptr;
  return abbrev ? abbrev : "";
}

json exitCode(const ExitCode& e) {
  return {{"status", json::array({e.status})},
          {"return_code", noVal(e.return_code, e.status != "SIGNALED")},
          {"signal", {{"id", noVal(e.signal, e.signal != 0)}, {"name", signalName(e.signal)}}}};
}

json tres(const char* type, const char* name, int id, int64_t count) {
  return {{"type", type}, {"name", name}, {"id", id}, {"count", count}};
}

// tres.allocated as slurmdbd stores it (AccountingStorageTRES=gres/gpu): cpu, mem, energy
// (not measured: -2), node, billing (= CPUs), gres/gpu when the run had GPUs.
json allocatedTres(const SlurmdbRun& run, bool with_energy) {
  json out = json::array();
  if (run.nodes.empty()) return out;
  out.push_back(tres("cpu", "", 1, run.cpus));
  out.push_back(tres("mem", "", 2, run.mem_mb));
  if (with_energy) out.push_back(tres("energy", "", 3, -2));
  out.push_back(tres("node", "", 4, static_cast<int64_t>(run.nodes.size())));
  if (with_energy) out.push_back(tres("billing", "", 5, run.cpus));
  if (run.gpus > 0) out.push_back(tres("gres", "gpu", 1001, run.gpus));
  return out;
}

bool started(const SlurmdbRun& run) {
  return run.start_time > 0;
}

}  // namespace

SlurmdbRun runOf(const Job& job) {
  SlurmdbRun run;
  run.job_id = job.id;
  run.sluid = job.sluid;
  run.name = job.request.name;
  run.user = job.user;
  run.group = job.group;
  run.account =
      !job.request.charge.account.empty() ? job.request.charge.account : job.request.account;
  run.qos = !job.request.charge.qos.empty() ? job.request.charge.qos : "normal";
  run.association_id = job.request.charge.association_id;
  run.partition = job.request.partition;
  run.constraints = job.request.constraints;
  run.working_directory = job.request.cwd;
  run.standard_output = job.request.standard_output;
  run.standard_error = job.request.standard_error;
  run.stdout_expanded = job.stdout_expanded;
  run.stderr_expanded = job.stderr_expanded;
  // A requeue in progress ends this run: slurmdbd keeps it as [PENDING, REQUEUED], with the
  // restart count it ran with (the job's counts the requeue already).
  run.requeued = job.requeuing;
  run.restart_count = job.restart_count - (job.requeuing ? 1 : 0);
  run.state = job.base_state;
  run.reason = job.reason;
  run.submit_time = job.submit_time;
  // PENDING and completing: a requeue whose step is being killed.
  const bool ran = job.base_state != "PENDING" || job.requeuing || job.completing;
  // A pending job's start_time is the scheduler's estimate, not a start; a running one's
  // end_time its expected end.
  run.start_time = ran ? job.start_time : 0;
  run.end_time = ran && job.base_state != "RUNNING" ? job.end_time : 0;
  run.time_limit_min = job.request.time_limit_min;
  run.exit_code = job.exit_code;
  run.hold = job.request.hold;
  run.het = job.isHet();
  run.het_job_id = job.het_job_id;
  run.het_offset = job.het_offset;
  run.nodes = job.alloc_nodes;
  const int nodes = static_cast<int>(job.alloc_nodes.size());
  run.cpus = job.alloc_cpus_per_node * nodes;
  run.mem_mb = job.alloc_mem_per_node * nodes;
  run.gpus = job.alloc_gpus_per_node * nodes;
  run.requested_cpus = std::max(1, job.request.cpus_per_task * job.request.tasks);
  run.memory_per_cpu_mb = job.request.memory_per_cpu_mb;
  run.memory_per_node_mb = job.request.memory_per_node_mb;
  return run;
}

void SlurmdbLedger::observe(const Job& job) {
  SlurmdbRun run = runOf(job);
  const auto known = by_sluid_.find(job.sluid);
  if (known == by_sluid_.end()) {
    by_sluid_.emplace(job.sluid, runs_.size());
    runs_.push_back(std::move(run));
    return;
  }
  SlurmdbRun& record = runs_[known->second];
  if (run.nodes.empty() && !record.nodes.empty()) {  // the allocation was given up
    run.nodes = record.nodes;
    run.cpus = record.cpus;
    run.mem_mb = record.mem_mb;
    run.gpus = record.gpus;
  }
  if (run.start_time == 0 && record.start_time > 0 && record.requeued) {
    return;  // the requeued run is over; the job pends under its next SLUID
  }
  record = std::move(run);
}

bool selectsRun(const SlurmdbRun& run, const std::vector<std::string>& users, int64_t start,
                int64_t end, int64_t now) {
  if (!users.empty() && std::find(users.begin(), users.end(), run.user) == users.end()) {
    return false;
  }
  if (start <= 0) return true;
  const int64_t until = end > 0 ? end : now;
  return run.submit_time <= until && (run.end_time == 0 || run.end_time >= start);
}

json slurmdbRecord(const SlurmdbRun& run, const std::string& version, const std::string& cluster,
                   int64_t now, bool with_steps) {
  json r = recordTemplate();
  const std::string sluid = formatSluid(run.sluid);
  const bool ran = started(run);
  const int64_t end = run.end_time > 0 ? run.end_time : (ran ? now : 0);
  const int64_t elapsed = ran ? std::max<int64_t>(0, end - run.start_time) : 0;
  const int64_t node_count = static_cast<int64_t>(run.nodes.size());
  r["account"] = run.account;
  r["allocation_nodes"] = node_count;
  r["association"]["cluster"] = cluster;
  r["association"]["id"] = run.association_id;
  r["cluster"] = cluster;
  r["constraints"] = run.constraints;
  r["sluid"] = sluid;
  r["original_sluid"] = sluid;
  r["derived_exit_code"] = exitCode(ExitCode{});
  r["exit_code"] = run.requeued ? exitCode(ExitCode{}) : exitCode(run.exit_code);
  json& time = r["time"];
  time["elapsed"] = elapsed;
  time["eligible"] = run.submit_time;
  time["end"] = run.end_time;
  time["planned"] = noVal(ran ? std::max<int64_t>(0, run.start_time - run.submit_time) : 0);
  time["start"] = run.start_time;
  time["submission"] = run.submit_time;
  time["suspended"] = 0;
  time["limit"] = run.time_limit_min ? noVal(*run.time_limit_min)
                                     : json{{"set", false}, {"infinite", true}, {"number", 0}};
  r["flags"] = ran ? json::array({"STARTED_ON_SCHEDULE", "START_RECEIVED"}) : json::array();
  r["group"] = run.group;
  r["het"]["job_id"] = run.het ? run.het_job_id : 0;
  r["het"]["job_offset"] = noVal(run.het_offset, run.het);
  r["job_id"] = run.job_id;
  r["name"] = run.name;
  r["nodes"] = run.nodes.empty() ? "None assigned" : compressHostlist(run.nodes);
  r["partition"] = run.partition;
  r["hold"] = run.hold;
  r["qos"] = run.qos;
  r["required"]["CPUs"] = run.requested_cpus;
  r["required"]["memory_per_cpu"] =
      noVal(run.memory_per_cpu_mb.value_or(0), run.memory_per_cpu_mb.has_value());
  r["required"]["memory_per_node"] =
      noVal(run.memory_per_node_mb.value_or(0), run.memory_per_node_mb.has_value());
  r["restart_cnt"] = run.restart_count;
  r["stdout_expanded"] = run.stdout_expanded;
  r["stderr_expanded"] = run.stderr_expanded;
  r["stdout"] = run.standard_output;
  r["stderr"] = run.standard_error.empty() ? run.standard_output : run.standard_error;
  r["state"]["current"] =
      run.requeued ? json::array({"PENDING", "REQUEUED"}) : json::array({run.state});
  r["state"]["reason"] = run.reason;
  json steps = json::array();
  if (with_steps && ran) {
    json step = recordTemplate()["steps"][0];
    step["time"]["elapsed"] = elapsed;
    step["time"]["end"] = noVal(run.end_time, run.end_time > 0);
    step["time"]["start"] = noVal(run.start_time);
    step["exit_code"] =
        run.requeued ? exitCode(ExitCode{"SIGNALED", 0, SIGTERM}) : exitCode(run.exit_code);
    step["nodes"] = {
        {"count", node_count}, {"range", compressHostlist(run.nodes)}, {"list", run.nodes}};
    step["state"] = json::array({run.requeued ? "CANCELLED" : run.state});
    step["step"]["id"] = std::to_string(run.job_id) + ".batch";
    step["tres"]["allocated"] = allocatedTres(run, false);
    steps.push_back(std::move(step));
  }
  r["steps"] = std::move(steps);
  r["tres"]["allocated"] = allocatedTres(run, true);
  json requested = allocatedTres(run, false);
  r["tres"]["requested"] = requested;
  r["user"] = run.user;
  r["working_directory"] = run.working_directory;
  if (version == "v0.0.44") v0044Shape(r);
  return r;
}

}  // namespace tuneplane::sim
