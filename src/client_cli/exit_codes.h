// The exit codes of the `tuneplane` command.
// Exit codes scripts can trust, the same for every command (docs/users.md's table is the
// reference):
//   0   success; with --wait, the job Succeeded
//   1   the job ended Failed or Cancelled (--wait); for the offline and `slurm` commands,
//       an operational failure (I/O, slurmrestd unreachable); `cp`: a local write failed
//   2   invalid input or refusal: a bad flag, spec or config, a spec the server refused
//       (422, every error printed with its field), another 4xx
//   3   not found: no such job or attempt (404; another user's job reads as not found)
//   4   authentication: the server answered 401 or 403; slurmrestd refused the token
//   5   the TunePlane server could not be reached, or failed (5xx, an answer that is not
//       the API's)
//   6   outcome unknown: a request that changes something (submit, cancel, abandon; a
//       `slurm submit`) was sent but no answer came back — it may have been carried out
//   7   --timeout passed before the job (or the followed attempt) ended; nothing cancelled
//   130 interrupted (Ctrl-C) while waiting, following or copying; the job was not cancelled
#pragma once

namespace tuneplane::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitInvalid = 2;
inline constexpr int kExitJobFailed = 1;  // --wait: the job ended Failed or Cancelled
inline constexpr int kExitNotFound = 3;
inline constexpr int kExitAuth = 4;
inline constexpr int kExitServer = 5;
inline constexpr int kExitUnknownOutcome = 6;
inline constexpr int kExitTimeout = 7;
inline constexpr int kExitInterrupted = 130;

}  // namespace tuneplane::cli
