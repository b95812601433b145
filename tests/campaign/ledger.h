// The jobs' own ledger (issue 37): every run of a job's command appends a record when it
// starts and another when its shell exits (by itself, or on the SIGTERM of a cancel or a time
// limit) to one file that every attempt of the TunePlane job shares — `ledger` in the job's
// checkpoint directory (TUNEPLANE_CHECKPOINT_DIR, staging_paths.h). One line a record:
//
//   start|end <Unix time in µs resolution: bash's $EPOCHREALTIME> <SLURM_JOB_ID>
//   <TUNEPLANE_ATTEMPT> <the command shell's PID>
//
// Appends of one short line are atomic (O_APPEND), so concurrent runs cannot tear a record.
// checkLedger reads such a file, and nothing else, to prove what issue 37 promises: no two
// runs of one TunePlane job's command at the same time (whichever Slurm jobs ran them), and no
// attempt's command started after a later attempt's had. A run killed before it could write
// its end (SIGKILL, a node's loss) is bounded from outside (EndBound): by when the simulator
// saw its batch script gone, or Slurm's end time. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::campaign {

inline constexpr std::string_view kLedgerFile = "ledger";

// The shell that begins a job's command (`bash -c`): writes the start record and arranges the
// end record. Free of double quotes (het specs do not quote the script) and of anything YAML
// would read in a double-quoted scalar.
std::string ledgerPrologue();

struct LedgerRun {
  uint64_t slurm_job_id = 0;
  int attempt = 0;
  std::string pid;
  int64_t start_us = 0;
  std::optional<int64_t> end_us;  // as the run recorded it
  // end_us, or for a run that recorded none the bound it was given (kForever without one).
  int64_t until_us = 0;
};
inline constexpr int64_t kForever = INT64_MAX;

// The latest a run that recorded no end can have ended, known from outside the job; nullopt
// when nothing bounds it (it is then taken to run for ever, so any later run overlaps it).
using EndBound = std::function<std::optional<int64_t>(const LedgerRun&)>;

struct LedgerVerdict {
  std::vector<LedgerRun> runs;          // by start time
  std::map<int, int> starts;            // attempt → how many runs of its command started
  int overlaps = 0;                     // runs that started while another was running
  int out_of_order = 0;                 // runs that started after a run of a later attempt had
  std::vector<std::string> violations;  // each on one line: overlaps, order, malformed records
};

// `text`: a ledger file's content. `bound` is asked only about runs with no end record.
LedgerVerdict checkLedger(std::string_view text, const EndBound& bound);

}  // namespace tuneplane::campaign
