// `tuneplane cancel ID` and `tuneplane attempt abandon ID N --reason TEXT`: the two verbs that
// change a job. Both print the job the server answers with (text: one line; -o json|yaml:
// the object). Without an answer the outcome is unknown: exit 4.
#include <memory>

#include <fmt/format.h>

#include "client_cli/exit_codes.h"
#include "client_cli/server_commands.h"

namespace tuneplane::cli {
namespace {

int printChanged(ServerSession& session, const client::Json& job, const std::string& what) {
  if (session.format() != OutputFormat::kText) {
    session.printDocument(job);
    return kExitOk;
  }
  auto view = client::jobFromJson(job);
  if (!view) return session.fail({view.error()}, kExitServer);
  session.io().out << fmt::format("{}: {} (phase {})\n", view->id, what, view->phase);
  return kExitOk;
}

}  // namespace

int runCancel(const JobIdFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto job = session->api().cancelJob(flags.id);
  if (!job) return session->fail(job.error(), /*changes=*/true);
  return printChanged(*session, *job, "cancel requested");
}

int runAbandon(const AbandonFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  if (flags.attempt < 1) {
    return session->fail({{"cli.invalid_attempt", "N", "the attempt number must be at least 1"}},
                         kExitInvalid);
  }
  auto reason = requireOption(flags.reason, "--reason");
  if (!reason) return session->fail({reason.error()}, kExitInvalid);
  auto job = session->api().abandonAttempt(flags.id, flags.attempt, *reason);
  if (!job) return session->fail(job.error(), /*changes=*/true);
  return printChanged(*session, *job, fmt::format("attempt {} abandoned", flags.attempt));
}

void addJobActionCommands(CLI::App& app, IoSource io) {
  auto cancel = std::make_shared<JobIdFlags>();
  CLI::App* cmd = app.add_subcommand(
      "cancel", "Cancel a job: TunePlane cancels its Slurm job and makes no further attempt");
  cmd->add_option("ID", cancel->id, "The job id")->required();
  addServerFlags(*cmd, cancel->server);
  cmd->footer(kServerExitCodes);
  bindRunner(*cmd, cancel, io, runCancel);

  CLI::App* attempt = app.add_subcommand("attempt", "Operate on one attempt of a job (admins)");
  attempt->require_subcommand(1);
  auto abandon = std::make_shared<AbandonFlags>();
  cmd = attempt->add_subcommand(
      "abandon",
      "Give up on an attempt whose submit receipt was lost and cannot be found (SubmitUnknown), "
      "so the job can go on; recorded with your name and the reason (admins only)");
  cmd->add_option("ID", abandon->id, "The job id")->required();
  cmd->add_option("N", abandon->attempt, "The attempt number")->required();
  cmd->add_option("--reason", abandon->reason, "Why (required; stored with the attempt)");
  addServerFlags(*cmd, abandon->server);
  cmd->footer(kServerExitCodes);
  bindRunner(*cmd, abandon, std::move(io), runAbandon);
}

}  // namespace tuneplane::cli
