// What every verb that talks to `tuneplane serve` shares: the --server/--token/-o flags,
// the world a verb touches (streams, whether stdout is a terminal, the clock, the sleeper,
// the environment — all injectable, so tests run verbs in-process against a fake server
// with a fake clock), the connection, printing documents (-o json|yaml: the server's
// objects verbatim) and errors, and the exit code each failure earns (exit_codes.h).
// Thread-safety: one session per command run.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <tl/expected.hpp>

#include "client/api_client.h"
#include "client/client_config.h"
#include "client/poll.h"
#include "client_cli/job_views.h"
#include "client_cli/output.h"
#include "common/clock.h"

namespace tuneplane::cli {

struct ServerFlags {
  std::optional<std::string> server;
  std::optional<std::string> token;
  std::string output = "text";
};

// --server, --token, --output/-o on `cmd`.
void addServerFlags(CLI::App& cmd, ServerFlags& flags);

// The world of one command run.
struct CommandIo {
  std::ostream& out;
  std::ostream& err;
  std::istream& in;       // `submit -f -` reads the spec here
  bool terminal = false;  // stdout is a terminal: relative times, aligned tables
  const Clock& clock;
  client::Sleeper& sleeper;
  client::ClientEnvironment env;
  client::ClientTimeouts timeouts;
  bool err_terminal = false;  // stderr is a terminal: progress bars (`cp`)
};

// std::cout/std::cerr, isatty(stdout), the system clock, the Ctrl-C-aware sleeper, getenv.
CommandIo& processIo();

// Where a verb's callback finds its world when it runs: processIo in the binary; the tests
// parse real command lines in-process with their own streams, clock and environment.
using IoSource = std::function<CommandIo&()>;

// --timeout and --poll-interval of the waiting verbs, as durations ("90s", "30m", "1h").
struct WaitFlags {
  std::optional<std::string> timeout;
  std::optional<std::string> poll_interval;
};
void addWaitFlags(CLI::App& cmd, WaitFlags& flags);
// Errors: "cli.invalid_timeout", "cli.invalid_poll_interval".
Result<client::PollOptions> pollOptions(const WaitFlags& flags);

class ServerSession {
 public:
  // Parses -o, resolves the configuration and makes the client. On failure prints the
  // errors and returns the exit code (2).
  static tl::expected<ServerSession, int> open(const ServerFlags& flags, CommandIo& io);

  client::ApiClient& api() { return *api_; }
  OutputFormat format() const { return format_; }
  CommandIo& io() { return io_; }
  // Where the server and the token came from (never print config().token).
  const client::ClientConfig& config() const { return config_; }
  ViewOptions view() const { return {io_.clock.nowMs(), io_.terminal}; }

  // -o json|yaml: prints `document` (REQUIRES: format() is not kText).
  void printDocument(const client::Json& document);
  // Prints the errors (text: lines on stderr, with a hint where one helps; json/yaml: a
  // document on stdout) and returns the exit code the failure earns. `changes` says the
  // request would change something (submit, cancel, abandon): no answer → exit 4.
  int fail(const client::ApiError& error, bool changes);
  int fail(const Errors& errors, int exit_code);
  // A note for people on stderr (only in text mode; documents stay alone on stdout).
  void note(const std::string& line);

 private:
  ServerSession(CommandIo& io, OutputFormat format, client::ClientConfig config,
                std::unique_ptr<client::ApiClient> api);

  CommandIo& io_;
  OutputFormat format_;
  client::ClientConfig config_;
  std::unique_ptr<client::ApiClient> api_;
};

// The exit code of a failed request (exit_codes.h).
int exitCodeFor(const client::ApiError& error, bool changes);

}  // namespace tuneplane::cli
