// See ledger.h.
#include "campaign/ledger.h"

#include <algorithm>
#include <sstream>

namespace tuneplane::campaign {
namespace {

// "1796535528.188998" (EPOCHREALTIME; "," as the separator in some locales) → µs.
std::optional<int64_t> parseMicros(const std::string& text) {
  const size_t dot = text.find_first_of(".,");
  const std::string whole = text.substr(0, dot);
  std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 12 || fraction.size() > 9 ||
      whole.find_first_not_of("0123456789") != std::string::npos ||
      fraction.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  fraction.resize(6, '0');
  return std::stoll(whole) * 1'000'000 + std::stoll(fraction);
}

std::string seconds(int64_t us) {
  if (us == kForever) return "for ever";
  std::ostringstream out;
  out << us / 1'000'000 << "." << std::to_string(1'000'000 + us % 1'000'000).substr(1);
  return out.str();
}

std::string describeRun(const LedgerRun& r) {
  return "attempt " + std::to_string(r.attempt) + "'s command in Slurm job " +
         std::to_string(r.slurm_job_id) + " (from " + seconds(r.start_us) + " to " +
         seconds(r.until_us) + (r.end_us ? "" : ", no end recorded") + ")";
}

}  // namespace

std::string ledgerPrologue() {
  // $$ is the command's own shell: with the Slurm job, it tells two runs in one Slurm job
  // apart (a restart). The EXIT trap writes the end record whether the command ends by itself
  // or on the SIGTERM that the TERM trap turns into an exit; both are set before the start
  // record, so a run whose start is recorded always gets its end.
  return "led_file=$TUNEPLANE_CHECKPOINT_DIR/" + std::string(kLedgerFile) +
         "; led() { echo $1 $EPOCHREALTIME ${SLURM_JOB_ID:-0} ${TUNEPLANE_ATTEMPT:-0} $$ >> "
         "$led_file; }; trap 'led end' EXIT; trap 'exit 143' TERM; led start";
}

LedgerVerdict checkLedger(std::string_view text, const EndBound& bound) {
  LedgerVerdict v;
  // Runs by (Slurm job, shell PID): a start opens one, its end closes it.
  std::map<std::pair<uint64_t, std::string>, size_t> open;
  std::istringstream lines{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string kind, time, job, attempt, pid, extra;
    fields >> kind >> time >> job >> attempt >> pid;
    const auto at = parseMicros(time);
    const bool numbers = !job.empty() && job.find_first_not_of("0123456789") == std::string::npos &&
                         !attempt.empty() &&
                         attempt.find_first_not_of("0123456789") == std::string::npos;
    if ((kind != "start" && kind != "end") || !at || !numbers || pid.empty() || (fields >> extra)) {
      v.violations.push_back("ledger line " + std::to_string(number) + " is malformed: '" + line +
                             "'");
      continue;
    }
    const auto key = std::make_pair(std::stoull(job), pid);
    if (kind == "start") {
      LedgerRun run;
      run.slurm_job_id = key.first;
      run.attempt = std::stoi(attempt);
      run.pid = pid;
      run.start_us = *at;
      open[key] = v.runs.size();
      v.runs.push_back(run);
      ++v.starts[run.attempt];
      continue;
    }
    const auto found = open.find(key);
    if (found == open.end() || v.runs[found->second].attempt != std::stoi(attempt)) {
      v.violations.push_back("ledger line " + std::to_string(number) + " ends a run that never " +
                             "started: '" + line + "'");
      continue;
    }
    v.runs[found->second].end_us = *at;
    open.erase(found);
  }
  for (LedgerRun& run : v.runs) {
    run.until_us = run.end_us ? *run.end_us : bound ? bound(run).value_or(kForever) : kForever;
  }
  std::stable_sort(v.runs.begin(), v.runs.end(),
                   [](const LedgerRun& a, const LedgerRun& b) { return a.start_us < b.start_us; });
  // One sweep by start time: the run that ends last so far, and the latest attempt so far.
  const LedgerRun* longest = nullptr;
  const LedgerRun* latest = nullptr;
  for (const LedgerRun& run : v.runs) {
    if (longest != nullptr && run.start_us < longest->until_us) {
      ++v.overlaps;
      v.violations.push_back("RAN AT ONCE: " + describeRun(run) + " started while " +
                             describeRun(*longest) + " was running");
    }
    if (latest != nullptr && run.attempt < latest->attempt) {
      ++v.out_of_order;
      v.violations.push_back("OUT OF ORDER: " + describeRun(run) + " started after " +
                             describeRun(*latest) + " had");
    }
    if (longest == nullptr || run.until_us > longest->until_us) longest = &run;
    if (latest == nullptr || run.attempt > latest->attempt) latest = &run;
  }
  return v;
}

}  // namespace tuneplane::campaign
