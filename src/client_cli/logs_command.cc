// `tuneplane logs ID [--attempt N] [--component POOL] [--stream stdout|stderr] [-f]`: an attempt's
// scheduler log. The server returns at most the last 64 KiB / 2,000 lines of a log; what is
// left out is said on stderr (stdout holds only the log). -f follows the attempt until it
// ends (client/log_follow.h says how, and what happens when more than the window is
// written between two polls), then exits 0; --timeout → 7, Ctrl-C → 130, the job untouched.
#include <memory>

#include <fmt/format.h>

#include "client/log_follow.h"
#include "client_cli/exit_codes.h"
#include "client_cli/server_commands.h"
#include "common/human.h"

namespace tuneplane::cli {
namespace {

bool wantsStderr(const LogsFlags& flags) {
  return flags.stderr_stream || flags.stream == "stderr";
}

// Where the whole file is: the attempt's logs/ folder (see attempt/log_tail.h).
std::string logPath(const client::AttemptView& attempt, const client::LogsView& logs) {
  const std::string name = logs.component + (logs.stream == "stderr" ? ".err" : ".out");
  if (attempt.staging_dir.empty() || logs.component.empty()) {
    return fmt::format(
        "{} in the attempt's logs/ folder (`tuneplane describe` shows its "
        "staging dir)",
        logs.component.empty() ? "the log" : name);
  }
  return attempt.staging_dir + "/logs/" + name;
}

void printChunk(ServerSession& session, const client::LogChunk& chunk, const client::LogsView& logs,
                const client::AttemptView& attempt) {
  if (chunk.earlier_bytes > 0) {
    session.note(
        fmt::format("[tuneplane: the first {} of this log are not shown (the server "
                    "returns the last 64 KiB / 2,000 lines); the whole file: {}]",
                    formatBytes(chunk.earlier_bytes), logPath(attempt, logs)));
  }
  if (chunk.skipped_bytes > 0) {
    session.note(
        fmt::format("[tuneplane: {} of output not shown: more than the server's log "
                    "window (64 KiB / 2,000 lines) was written between two polls; the "
                    "whole file: {}]",
                    formatBytes(chunk.skipped_bytes), logPath(attempt, logs)));
  }
  if (chunk.restarted) {
    session.note(
        "[tuneplane: the log got shorter (replaced or truncated); shown from its new "
        "start]");
  }
  session.io().out << chunk.text;
  session.io().out.flush();
}

int follow(ServerSession& session, const LogsFlags& flags, const client::PollOptions& options) {
  client::LogsQuery query{flags.attempt, flags.component, wantsStderr(flags)};
  bool warned = false;
  client::LogFollowCallbacks callbacks;
  callbacks.on_chunk = [&](const client::LogChunk& chunk, const client::LogsView& logs,
                           const client::AttemptView& attempt) {
    printChunk(session, chunk, logs, attempt);
  };
  callbacks.on_waiting = [&](const std::string& why) {
    session.note(fmt::format("[tuneplane: waiting: {}]", why));
  };
  callbacks.on_retry = [&](const client::ApiError& error) {
    if (warned) return;
    warned = true;
    session.note(fmt::format("[tuneplane: the server did not answer ({}); still trying]",
                             error.errors.front().message));
  };
  CommandIo& io = session.io();
  const client::LogFollow result =
      client::followLogs(session.api(), flags.id, query, options, io.clock, io.sleeper, callbacks);
  const std::string attempt = result.attempt ? std::to_string(*result.attempt) : "-";
  switch (result.end) {
    case client::PollEnd::kDone: {
      if (!result.job || !result.attempt) return kExitOk;
      const client::AttemptView* a = result.job->attempt(*result.attempt);
      if (a == nullptr) {
        session.note(fmt::format("[tuneplane: {} ended ({}) before any attempt started]", flags.id,
                                 result.job->phase));
        return kExitOk;
      }
      session.note(fmt::format("[tuneplane: attempt {} ended: {}]", attempt, a->phase));
      if (result.job->current_attempt && result.job->current_attempt->number > *result.attempt) {
        session.note(fmt::format(
            "[tuneplane: attempt {} has started: tuneplane logs {} "
            "--attempt {} -f]",
            result.job->current_attempt->number, flags.id, result.job->current_attempt->number));
      } else if (!result.job->terminal()) {
        session.note(
            fmt::format("[tuneplane: the job is {}; a retry may follow]", result.job->phase));
      }
      return kExitOk;
    }
    case client::PollEnd::kTimedOut:
      session.note(
          fmt::format("[tuneplane: timed out; attempt {} of {} keeps running]", attempt, flags.id));
      return kExitTimeout;
    case client::PollEnd::kInterrupted:
      session.note(fmt::format("[tuneplane: interrupted; {} keeps running]", flags.id));
      return kExitInterrupted;
    case client::PollEnd::kFailed:
      return session.fail(*result.error, false);
  }
  return kExitServer;
}

}  // namespace

int runLogs(const LogsFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto options = pollOptions(flags.wait_flags);
  if (!options) return session->fail({options.error()}, kExitInvalid);
  if (flags.stream && *flags.stream != "stdout" && *flags.stream != "stderr") {
    return session->fail(
        {{"cli.invalid_stream", "--stream",
          fmt::format("--stream must be stdout or stderr, not '{}'", *flags.stream)}},
        kExitInvalid);
  }
  if (flags.attempt && *flags.attempt < 1) {
    return session->fail({{"cli.invalid_attempt", "--attempt", "--attempt must be at least 1"}},
                         kExitInvalid);
  }
  if (flags.follow) {
    if (session->format() != OutputFormat::kText) {
      return session->fail({{"cli.invalid_output", "--output",
                             "logs -f prints the log as text; -o json|yaml work without -f"}},
                           kExitInvalid);
    }
    return follow(*session, flags, *options);
  }
  if (flags.wait_flags.timeout || flags.wait_flags.poll_interval) {
    return session->fail(
        {{"cli.invalid_option", "--timeout", "--timeout and --poll-interval apply only with -f"}},
        kExitInvalid);
  }
  auto answer = session->api().jobLogs(
      flags.id, client::LogsQuery{flags.attempt, flags.component, wantsStderr(flags)});
  if (!answer) return session->fail(answer.error(), false);
  if (session->format() != OutputFormat::kText) {
    session->printDocument(*answer);
    return kExitOk;
  }
  auto logs = client::logsFromJson(*answer);
  if (!logs) return session->fail({logs.error()}, kExitServer);
  if (logs->missing_reason) {
    session->note(fmt::format("[tuneplane: no log: {}]", *logs->missing_reason));
    return kExitOk;
  }
  // One window, shown like the first window of -f (the same note about what is left out).
  printChunk(*session, client::LogWindow().next(*logs), *logs, client::AttemptView{});
  return kExitOk;
}

void addLogsCommand(CLI::App& app, IoSource io) {
  auto flags = std::make_shared<LogsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "logs", "Print an attempt's log (the last 64 KiB / 2,000 lines); -f follows it");
  cmd->add_option("ID", flags->id, "The job id")->required();
  cmd->add_option("--attempt", flags->attempt, "Attempt number (default: the latest)");
  cmd->add_option("--component", flags->component, "Pool name (default: the first component)");
  CLI::Option* stream =
      cmd->add_option("--stream", flags->stream, "stdout (the default) or stderr");
  cmd->add_flag("--stderr", flags->stderr_stream, "Short for --stream stderr")->excludes(stream);
  cmd->add_flag("-f,--follow", flags->follow,
                "Follow until the attempt ends (then exit 0); prints only new output");
  addWaitFlags(*cmd, flags->wait_flags);
  addServerFlags(*cmd, flags->server);
  cmd->footer(std::string("The log goes to stdout; notes about what is not shown go to "
                          "stderr.\n") +
              kServerExitCodes);
  bindRunner(*cmd, flags, std::move(io), runLogs);
}

}  // namespace tuneplane::cli
