// `tuneplane submit SPEC [--wait]` (or `-f SPEC`): POST /v1/jobs with the spec as written (YAML or
// JSON; "-" reads stdin) under an Idempotency-Key (--idempotency-key, else a fresh random
// one): an answer that is lost is asked for again under the same key until the server
// answers (client/idempotent_submit.h), so one submit makes one job; exit 6 only when the
// server stays away, naming the key and the command that settles it. A refused spec prints
// every error with its field (exit 2). --wait follows the job to its end: exit 0
// Succeeded, 1 Failed or Cancelled, 7 --timeout, 130 Ctrl-C — neither of the last two
// cancels the job.
#include <memory>

#include <fmt/format.h>

#include "client/idempotent_submit.h"
#include "client/job_wait.h"
#include "client_cli/exit_codes.h"
#include "client_cli/server_commands.h"
#include "common/idempotency_key.h"
#include "common/input_file.h"
#include "common/workdir_tree.h"
#include "spec/spec_edit.h"
#include "spec/spec_parser.h"

namespace tuneplane::cli {
namespace {

// The hard bound of what --workdir reads from the disk: the largest folder a site may take
// (api/server_config.h); the site's own limits are the server's to apply, named in its refusal.
constexpr workdir::Limits kWorkdirReadBound{.max_bytes = 1024ull * 1024 * 1024,
                                            .max_files = 100'000};

// --workdir DIR: the folder uploaded, and the spec's text naming it (spec.workdir). A spec
// that names another folder already is refused; the same one is left as it is. The error:
// the exit code, the errors printed.
tl::expected<std::string, int> shipWorkdir(const std::string& dir, const std::string& spec_text,
                                           ServerSession& session) {
  const auto refuse = [&](Error error) {
    error.field = "--workdir";
    return tl::unexpected<int>(session.fail({std::move(error)}, kExitInvalid));
  };
  auto tree = workdir::readWorkdirDir(dir, kWorkdirReadBound);
  if (!tree) return refuse(tree.error());
  auto archive = workdir::writeWorkdirTar(*tree);
  if (!archive) return refuse(archive.error());
  const std::string sha256 = workdir::workdirTreeSha256(*tree);
  const std::string reference = workdir::workdirReference(sha256);
  const spec::PartialSpec parsed = spec::parsePartialJobSpec(spec_text);
  if (parsed.spec.workdir && *parsed.spec.workdir != sha256) {
    return refuse({"cli.workdir_conflict", "",
                   "the spec names workdir " + workdir::workdirReference(*parsed.spec.workdir) +
                       " and --workdir " + dir + " is " + reference +
                       ": leave spec.workdir out, or --workdir"});
  }
  // The server's refusal as it is: its code names the limit or rule.
  auto uploaded = session.api().uploadWorkdir(std::move(*archive));
  if (!uploaded) return tl::unexpected<int>(session.fail(uploaded.error(), /*changes=*/false));
  session.note(
      fmt::format("workdir {}: {} files, {} bytes, {}", dir, tree->files, tree->bytes, reference));
  if (parsed.spec.workdir) return spec_text;
  auto text = spec::insertMapEntry(spec_text, {"spec"}, spec::quotedEntry("workdir", reference));
  // The new text must read as the old one plus the workdir, and nothing else.
  if (text) {
    spec::PartialSpec again = spec::parsePartialJobSpec(*text);
    spec::JobSpec expected = parsed.spec;
    expected.workdir = sha256;
    if (again.errors != parsed.errors || !(again.spec == expected)) text.reset();
  }
  if (!text) {
    return refuse({"cli.workdir_not_added", "",
                   "the folder was uploaded as " + reference +
                       " but cannot be written into this spec's text (an anchor or a tag on "
                       "spec): add `workdir: " +
                       reference + "` under spec yourself"});
  }
  return *text;
}

std::string phaseLine(const client::JobView& job) {
  return job.reason.empty() ? fmt::format("{}: {}", job.id, job.phase)
                            : fmt::format("{}: {} ({})", job.id, job.phase, job.reason);
}

}  // namespace

const char* const kServerExitCodes =
    "Exit codes: 0 success (with --wait: the job Succeeded); 1 the job ended Failed or\n"
    "Cancelled (--wait), or cp could not write a local file; 2 invalid input or refusal (a\n"
    "bad flag or config, a refused spec — every error printed with its field — another 4xx);\n"
    "3 no such job or file (404); 4 authentication (401/403); 5 the server unreachable or\n"
    "failing (5xx); 6 a cancel/abandon sent without an answer (it may have happened), or a\n"
    "submit whose answer stayed lost through its retries (its idempotency key is printed);\n"
    "7 --timeout passed (nothing cancelled); 130 interrupted by Ctrl-C while waiting or\n"
    "copying (nothing cancelled; cp keeps its partial file to resume).";

int runSubmit(const SubmitFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto poll = pollOptions(flags.wait_flags);
  if (!poll) return session->fail({poll.error()}, kExitInvalid);
  if (!flags.wait && (flags.wait_flags.timeout || flags.wait_flags.poll_interval)) {
    return session->fail({{"cli.invalid_option", "--timeout",
                           "--timeout and --poll-interval apply only with --wait"}},
                         kExitInvalid);
  }
  if (!flags.file || flags.file->empty()) {
    return session->fail({{"cli.missing_option", "SPEC",
                           "a job spec is required: tuneplane submit SPEC ('-' reads stdin)"}},
                         kExitInvalid);
  }
  auto spec = readInputFile(*flags.file, "SPEC", "job spec", io.in);
  if (!spec) return session->fail({spec.error()}, kExitInvalid);
  if (flags.workdir) {
    auto shipped = shipWorkdir(*flags.workdir, *spec, *session);
    if (!shipped) return shipped.error();
    spec = std::move(*shipped);
  }

  auto key =
      flags.idempotency_key ? Result<std::string>(*flags.idempotency_key) : newIdempotencyKey();
  if (!key) return session->fail({key.error()}, kExitInvalid);
  if (auto valid = checkIdempotencyKey(*key); !valid) {
    Error error = valid.error();
    error.field = "--idempotency-key";
    return session->fail({error}, kExitInvalid);
  }
  bool retried = false;
  auto created = client::submitIdempotently(
      session->api(), *spec, *key, io.clock, io.sleeper,
      [&](const client::ApiError& error, std::chrono::milliseconds wait) {
        if (!retried) {
          session->note(
              fmt::format("{}; asking again under idempotency key {} (no second job "
                          "can come of it)",
                          error.errors.front().message, *key));
        }
        retried = true;
        session->note(fmt::format("retrying in {:.1f}s", static_cast<double>(wait.count()) / 1000));
      });
  if (!created) {
    const int code = session->fail(created.error(), /*changes=*/true);
    if (code == kExitUnknownOutcome) {
      session->note(fmt::format(
          "the server did not answer; the job may exist under idempotency key {}. Once it "
          "answers, `tuneplane submit {} --idempotency-key {}` returns that job or creates it "
          "(never a second one) within 24 hours",
          *key, *flags.file, *key));
    }
    return code;
  }
  if (retried) session->note("the server answered");
  auto job = client::jobFromJson(*created);
  if (!job) return session->fail({job.error()}, kExitServer);
  if (!flags.wait) {
    if (session->format() != OutputFormat::kText) {
      session->printDocument(*created);
    } else {
      io.out << fmt::format("{} submitted ({})\n", job->id, job->phase);
    }
    return kExitOk;
  }

  session->note(
      fmt::format("{} submitted; waiting for it to end (Ctrl-C stops waiting, not "
                  "the job)",
                  job->id));
  // The phase the server accepted the job in comes first, whatever the first poll sees: a
  // fast control loop may have moved it on by then, and the output should not depend on that.
  std::string last_line = phaseLine(*job);
  session->note(last_line);
  bool warned = false;
  client::JobWaitCallbacks callbacks;
  callbacks.on_change = [&](const client::JobView& now) {
    std::string line = phaseLine(now);
    if (line == last_line) return;
    session->note(line);
    last_line = std::move(line);
  };
  callbacks.on_retry = [&](const client::ApiError& error) {
    if (warned) return;
    warned = true;
    session->note(
        fmt::format("the server did not answer ({}); still trying", error.errors.front().message));
  };
  const client::JobWait wait =
      client::waitForJob(session->api(), job->id, *poll, io.clock, io.sleeper, callbacks);
  if (wait.end == client::PollEnd::kFailed) return session->fail(*wait.error, false);
  const client::Json& last = wait.job.value_or(*created);
  auto final_view = client::jobFromJson(last);
  if (session->format() != OutputFormat::kText) session->printDocument(last);
  const std::string phase = final_view ? final_view->phase : job->phase;
  switch (wait.end) {
    case client::PollEnd::kDone:
      if (session->format() == OutputFormat::kText) io.out << phaseLine(*final_view) << '\n';
      return final_view->succeeded() ? kExitOk : kExitJobFailed;
    case client::PollEnd::kTimedOut:
      session->note(
          fmt::format("timed out waiting for {} (now {}); it keeps running", job->id, phase));
      return kExitTimeout;
    case client::PollEnd::kInterrupted:
      session->note(
          fmt::format("interrupted: {} keeps running (now {}); `tuneplane cancel {}` "
                      "stops it",
                      job->id, phase, job->id));
      return kExitInterrupted;
    case client::PollEnd::kFailed:
      break;
  }
  return kExitServer;
}

void addSubmitCommand(CLI::App& app, IoSource io) {
  auto flags = std::make_shared<SubmitFlags>();
  CLI::App* cmd = app.add_subcommand(
      "submit", "Submit a job spec to the TunePlane server (and with --wait, follow it)");
  CLI::Option* positional =
      cmd->add_option("SPEC", flags->file, "Job spec, YAML or JSON ('-' reads stdin)");
  cmd->add_option("-f,--file", flags->file, "The job spec, as an option (kubectl's way)")
      ->excludes(positional);
  cmd->add_flag("--wait", flags->wait,
                "Follow the job until it ends: exit 0 Succeeded, 1 Failed or Cancelled");
  addWaitFlags(*cmd, flags->wait_flags);
  cmd->add_option("--workdir", flags->workdir,
                  "Send this folder with the job (its code: at most the site's limits, 64 MiB "
                  "and 2000 files and folders by default); the job sees it read-only at "
                  "/workdir ($TUNEPLANE_WORKDIR), the same bytes in every attempt");
  cmd->add_option("--idempotency-key", flags->idempotency_key,
                  "Name this submit for the server (default: a fresh random key): a lost "
                  "answer is retried under it, and the same key with the same spec within 24 h "
                  "returns the first job instead of making a second");
  addServerFlags(*cmd, flags->server);
  cmd->footer(kServerExitCodes);
  bindRunner(*cmd, flags, std::move(io), runSubmit);
}

}  // namespace tuneplane::cli
