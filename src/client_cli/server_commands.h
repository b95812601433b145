// The verbs that talk to `tuneplane serve` through its /v1 API, as functions of their flags
// and a CommandIo, so tests (and the end-to-end suite) run them in-process; commands.h's
// add*Command functions bind them to CLI11. Each returns the exit code (exit_codes.h).
//
//   submit SPEC [--wait [--timeout D] [--poll-interval D]]   POST /v1/jobs (+ GET to wait)
//   get [jobs|job] [ID] [--phase P] [--name N] [-l k=v]… [--owner U] [--limit N]
//       [--continue T] [--all]                    GET /v1/jobs, GET /v1/jobs/{id}
//   describe [job] ID                                  GET /v1/jobs/{id} + /events
//   events ID                                     GET /v1/jobs/{id}/events
//   logs ID [--attempt N] [--component POOL] [--stream stderr] [-f [--timeout D]]
//   cancel ID                                     POST /v1/jobs/{id}/cancel
//   attempt abandon ID N --reason TEXT            POST /v1/jobs/{id}/attempts/{n}/abandon
//   cp [-r] JOB[:ATTEMPT|:checkpoints][/PATH] LOCAL  GET /v1/jobs/{id}/files[/content]
//   whoami                                        GET /v1/whoami
//   validate -f SPEC (a server configured, no --site)  POST /v1/validate
//   capabilities                                  GET /v1/capabilities
//   ls JOB[:ATTEMPT|:checkpoints][/PATH]          GET /v1/jobs/{id}/files
//   usage [--by B] [--since T] [--until T] [--user U]…  GET /v1/usage
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "client_cli/server_session.h"

namespace tuneplane::cli {

struct SubmitFlags {
  ServerFlags server;
  std::optional<std::string> file;  // "-" reads the spec from stdin
  bool wait = false;
  WaitFlags wait_flags;
  // --idempotency-key: the request's name for the server (a fresh random one when unset):
  // a lost answer is retried under it, and a re-run with it never makes a second job.
  std::optional<std::string> idempotency_key;
  // --workdir DIR: the folder is uploaded (POST /v1/workdirs) and the spec names it
  // (spec.workdir: sha256:…); the job sees it read-only at /workdir.
  std::optional<std::string> workdir;
};
int runSubmit(const SubmitFlags& flags, CommandIo& io);

struct GetFlags {
  ServerFlags server;
  std::optional<std::string> id;
  std::optional<std::string> phase;
  std::optional<std::string> name;
  std::optional<std::string> owner;
  std::vector<std::string> labels;  // "key=value"
  std::optional<int> limit;
  std::optional<std::string> continue_token;
  bool all = false;
};
int runGet(const GetFlags& flags, CommandIo& io);

struct JobIdFlags {
  ServerFlags server;
  std::string id;
};
int runDescribe(const JobIdFlags& flags, CommandIo& io);
int runEvents(const JobIdFlags& flags, CommandIo& io);
int runCancel(const JobIdFlags& flags, CommandIo& io);

struct AbandonFlags {
  ServerFlags server;
  std::string id;
  int attempt = 0;
  std::optional<std::string> reason;
};
int runAbandon(const AbandonFlags& flags, CommandIo& io);

struct LogsFlags {
  ServerFlags server;
  std::string id;
  std::optional<int> attempt;
  std::optional<std::string> component;
  std::optional<std::string> stream;  // --stream stdout|stderr
  bool stderr_stream = false;         // --stderr
  bool follow = false;
  WaitFlags wait_flags;
};
int runLogs(const LogsFlags& flags, CommandIo& io);

struct CpFlags {
  ServerFlags server;
  std::string source;       // JOB[:ATTEMPT|:checkpoints][/PATH]
  std::string destination;  // LOCAL
  bool recursive = false;   // -r
};
int runCp(const CpFlags& flags, CommandIo& io);

struct LsFlags {
  ServerFlags server;
  std::string source;  // JOB[:ATTEMPT|:checkpoints][/PATH], as for cp
};
int runLs(const LsFlags& flags, CommandIo& io);

// `tuneplane validate` against the server (cli/validate_command.cc decides when).
struct ValidateOnServerFlags {
  ServerFlags server;
  std::string file;  // "-" reads the spec from stdin
};
int runValidateOnServer(const ValidateOnServerFlags& flags, CommandIo& io);

struct CapabilitiesFlags {
  ServerFlags server;
};
int runCapabilities(const CapabilitiesFlags& flags, CommandIo& io);

struct WhoamiFlags {
  ServerFlags server;
};
int runWhoami(const WhoamiFlags& flags, CommandIo& io);

struct UsageFlags {
  ServerFlags server;
  std::optional<std::string> by;  // user, team, owner, job
  std::optional<std::string> since;
  std::optional<std::string> until;
  std::vector<std::string> users;
};
int runUsage(const UsageFlags& flags, CommandIo& io);

// The verbs on a CLI11 app; each callback runs in `io()`'s world (cli/commands.h's
// addServerCommands passes processIo).
void addSubmitCommand(CLI::App& app, IoSource io);        // submit_command.cc
void addGetCommands(CLI::App& app, IoSource io);          // get_commands.cc: get, describe, events
void addLogsCommand(CLI::App& app, IoSource io);          // logs_command.cc
void addJobActionCommands(CLI::App& app, IoSource io);    // job_action_commands.cc: cancel, attempt
void addCpCommand(CLI::App& app, IoSource io);            // cp_command.cc
void addLsCommand(CLI::App& app, IoSource io);            // ls_command.cc
void addCapabilitiesCommand(CLI::App& app, IoSource io);  // capabilities_command.cc
void addWhoamiCommand(CLI::App& app, IoSource io);        // whoami_command.cc
void addUsageCommand(CLI::App& app, IoSource io);         // usage_command.cc
void addServerCommands(CLI::App& app, IoSource io);       // all of the above
void addServerCommands(CLI::App& app);  // … with processIo (the `tuneplane` binary)

// Binds a runner to a CLI11 callback: a non-zero exit code ends the process with it.
template <typename Flags>
void bindRunner(CLI::App& cmd, std::shared_ptr<Flags> flags, IoSource io,
                int (*run)(const Flags&, CommandIo&)) {
  cmd.callback([flags, io = std::move(io), run] {
    if (const int code = run(*flags, io()); code != 0) throw CLI::RuntimeError(code);
  });
}

// The exit-code table every server verb's --help ends with.
extern const char* const kServerExitCodes;

}  // namespace tuneplane::cli
