// See invariants.h.
#include "campaign/invariants.h"

#include <sys/stat.h>

#include <filesystem>

#include "campaign/ledger.h"
#include "slurm/script_renderer.h"
#include "staging/stager.h"
#include "staging/staging_paths.h"
#include "support/test_files.h"

namespace tuneplane::campaign {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool writable(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) != 0 || (st.st_mode & 0222) != 0;
}

// The attempt's staged directory as the stager left it: 0555, every file of its manifest
// 0444 with the manifest's size and SHA-256, logs/ and output/ there. "" when so.
std::string checkStaged(const fs::path& dir) {
  if (writable(dir)) return dir.string() + " is writable (or gone)";
  const json manifest =
      json::parse(test::readFile((dir / "manifest.json").string()), nullptr, false);
  if (!manifest.is_object() || !manifest["files"].is_object()) return "manifest.json unreadable";
  for (const auto& [name, file] : manifest["files"].items()) {
    const fs::path path = dir / name;
    if (writable(path)) return name + " is writable (or gone)";
    const std::string data = test::readFile(path.string());
    if (data.size() != file.value("bytes", size_t{0}) ||
        staging::sha256Hex(data) != file.value("sha256", "")) {
      return name + " differs from the manifest";
    }
  }
  for (const char* sub : {"logs", "output"}) {
    if (!fs::is_directory(dir / sub)) return std::string(sub) + "/ is missing";
  }
  // A stage that failed (a full filesystem) or was killed is removed, at the latest before
  // the attempt is staged again: nothing half-written stays beside it.
  const fs::path temp(staging::stagingTempPrefix(dir.string()));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(temp.parent_path(), ec)) {
    if (entry.path().filename().string().starts_with(temp.filename().string()))
      return "a half-written stage is left beside it: " + entry.path().filename().string();
  }
  return "";
}

int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// How a Slurm job's batch script was started (the simulator's "runs", one per start): the
// starts the script refused before it did anything — a restart after a requeue (it exits
// kExitRestartRefused), or a copy of a doubled submit that found the attempt claimed (it
// exits kExitAlreadyClaimed) — and the starts that ran the attempt.
struct Starts {
  int ran = 0;
  int refused = 0;
};

Starts countStarts(const json& slurm_job) {
  Starts s;
  for (const json& run : slurm_job.value("runs", json::array())) {
    const int code = run.contains("exit_code") ? run.value("exit_code", -1) : -1;
    const bool restart = run.value("restart_cnt", 0) > 0;
    if (code == slurm::kExitAlreadyClaimed || code == slurm::kExitCannotClaim ||
        code == slurm::kExitSuperseded || (restart && code == slurm::kExitRestartRefused)) {
      ++s.refused;
    } else {
      ++s.ran;
    }
  }
  return s;
}

bool ended(const json& slurm_job) {
  const std::string state = slurm_job.value("state", "");
  return state.rfind("PENDING", 0) != 0 && state.rfind("RUNNING", 0) != 0;
}

// The events with `attempt` == n, in order: each starts where the last ended; the last ends
// at `phase`. "" when so.
std::string replay(const json& events, int n, const std::string& phase) {
  std::string at;
  int seen = 0;
  for (const json& e : events) {
    if (e.value("attempt", -1) != n) continue;
    const std::string from = e.value("from", "");
    if (seen++ > 0 && from != at) {
      return "event " + std::to_string(e.value("seq", 0)) + " moves from " + from + " but the " +
             "last one ended at " + at;
    }
    at = e.value("to", "");
  }
  if (at != phase) return "the events end at '" + at + "', the API shows " + phase;
  return "";
}

// The job's ledger (ledger.h) in its checkpoint directory, beside its attempts: the
// directory of any staged attempt, two levels up. "" when no attempt was staged.
std::string ledgerOf(const json& attempts) {
  for (const json& attempt : attempts) {
    const fs::path dir = attempt.value("staging_dir", "");
    if (dir.empty()) continue;
    return test::readFile(
        (dir.parent_path().parent_path() / staging::kCheckpointsDir / kLedgerFile).string());
  }
  return "";
}

// When the simulator saw the batch script of `run`'s Slurm job gone, for the start of that job
// (the one carrying `token`) that ran it: the bound of a run killed before it recorded its end.
std::optional<int64_t> endFromHistory(const json& slurm, const std::string& token,
                                      const LedgerRun& run) {
  std::optional<int64_t> found;
  int64_t latest_start = INT64_MIN;
  for (const json& job : slurmJobsWithToken(slurm, token)) {
    if (job.value("job_id", uint64_t{0}) != run.slurm_job_id) continue;
    for (const json& start : job.value("runs", json::array())) {
      const int64_t began = start.value("start_us", INT64_MAX);
      if (began > run.start_us || began < latest_start) continue;
      latest_start = began;
      found = start.contains("end_us") ? std::optional(start.value("end_us", int64_t{0}))
                                       : std::nullopt;
    }
  }
  return found;
}

}  // namespace

std::vector<json> slurmJobsWithToken(const json& slurm, const std::string& token) {
  std::vector<json> found;
  for (const json& j : slurm) {
    if (j.value("comment", "") == token) found.push_back(j);
  }
  return found;
}

Verdict checkInvariants(const Observed& observed) {
  Verdict v;
  auto violation = [&v](const std::string& job, const std::string& what) {
    v.violations.push_back(job + ": " + what);
  };
  std::set<std::string> tokens;
  for (const std::string& id : observed.ids) {
    ++v.jobs;
    const auto found = observed.jobs.find(id);
    if (found == observed.jobs.end() || !found->second.is_object()) {
      ++v.lost;
      violation(id, "LOST: the API does not find it");
      continue;
    }
    const json& job = found->second;
    const std::string phase = job.value("phase", "");
    ++v.phases[phase];
    const bool terminal = job.value("terminal", false);
    if (!terminal) {
      ++v.lost;
      violation(id, "LOST: still " + phase + " once the faults stopped (" +
                        job.value("reason", "") + ")");
    }
    const auto events = observed.events.find(id);
    const json no_events = json::array();
    const json& items = events == observed.events.end() ? no_events : events->second;
    if (const std::string bad = replay(items, 0, phase); !bad.empty()) violation(id, bad);
    const json& attempts = job["attempts"];
    // The job's own records of each run of its command, whichever Slurm job ran it.
    std::map<int, std::string> token_of;
    for (const json& attempt : attempts)
      token_of[attempt.value("number", 0)] = attempt.value("submit_token", "");
    const LedgerVerdict ledger =
        checkLedger(ledgerOf(attempts), [&](const LedgerRun& run) -> std::optional<int64_t> {
          const auto token = token_of.find(run.attempt);
          if (token == token_of.end()) return std::nullopt;
          return endFromHistory(observed.slurm, token->second, run);
        });
    for (const std::string& bad : ledger.violations) violation(id, bad);
    v.overlapping += ledger.overlaps > 0 ? 1 : 0;
    v.out_of_order += ledger.out_of_order > 0 ? 1 : 0;
    v.commands_run += static_cast<int>(ledger.runs.size());
    for (const LedgerRun& run : ledger.runs) {
      const auto token = token_of.find(run.attempt);
      bool carried = false;
      if (token != token_of.end()) {
        for (const json& s : slurmJobsWithToken(observed.slurm, token->second))
          carried = carried || s.value("job_id", uint64_t{0}) == run.slurm_job_id;
      }
      if (!carried) {
        violation(id, "its ledger records a run of attempt " + std::to_string(run.attempt) +
                          " in Slurm job " + std::to_string(run.slurm_job_id) +
                          ", which does not carry that attempt's token");
      }
    }
    for (const json& attempt : attempts) {
      const int n = attempt.value("number", 0);
      const std::string where = "attempt " + std::to_string(n);
      const std::string token = attempt.value("submit_token", "");
      tokens.insert(token);
      if (const std::string bad = replay(items, n, attempt.value("phase", "")); !bad.empty())
        violation(id, where + ": " + bad);
      const std::vector<json> slurm = slurmJobsWithToken(observed.slurm, token);
      int started = 0;  // starts that ran the attempt's work
      int refused = 0;
      for (const json& s : slurm) {
        const Starts starts = countStarts(s);
        started += starts.ran;
        refused += starts.refused;
        if (terminal && !ended(s)) {
          violation(id, where + ": Slurm job " + std::to_string(s.value("job_id", 0)) + " still " +
                            s.value("state", "") + " after the job ended " + phase);
        }
      }
      const fs::path dir = attempt.value("staging_dir", "");
      const int runs = dir.empty() ? 0 : lines(test::readFile((dir / "output/runs").string()));
      v.refused_starts += refused;
      const auto recorded = ledger.starts.find(n);
      const int ledger_runs = recorded == ledger.starts.end() ? 0 : recorded->second;
      if (started > 1 || runs > 1 || ledger_runs > 1) {
        ++v.run_twice;
        violation(id, where + ": RUN TWICE: " + std::to_string(slurm.size()) +
                          " Slurm jobs with its token started " + std::to_string(started) +
                          " times (and " + std::to_string(refused) +
                          " starts refused by the script); its command ran " +
                          std::to_string(runs) + " times by output/runs, " +
                          std::to_string(ledger_runs) + " by the job's ledger");
      }
      if (phase == "Succeeded" && &attempt == &attempts.back() &&
          (started != 1 || ledger_runs != 1)) {
        violation(id, where + ": Succeeded, but its token's Slurm jobs started " +
                          std::to_string(started) + " times and the job's ledger records " +
                          std::to_string(ledger_runs) + " runs of it");
      }
      const bool staged = !dir.empty() && fs::exists(dir);
      if (!slurm.empty() && !staged) violation(id, where + ": submitted, but no staged directory");
      if (staged) {
        if (const std::string bad = checkStaged(dir); !bad.empty())
          violation(id, where + ": staged directory: " + bad);
      }
    }
  }
  for (const json& s : observed.slurm) {
    if (!tokens.count(s.value("comment", ""))) {
      violation("Slurm job " + std::to_string(s.value("job_id", 0)),
                "carries no known attempt's token ('" + s.value("comment", "") + "')");
    }
  }
  return v;
}

}  // namespace tuneplane::campaign
