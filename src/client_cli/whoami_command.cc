// `tuneplane whoami`: who the server takes the token for (GET /v1/whoami), and which server
// and token source were used — a first check of a new config. Never prints the token.
// Also holds addServerCommands, which puts every server verb on the app.
#include <memory>

#include <fmt/format.h>

#include "client_cli/exit_codes.h"
#include "client_cli/server_commands.h"

namespace tuneplane::cli {

int runWhoami(const WhoamiFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto answer = session->api().whoami();
  if (!answer) return session->fail(answer.error(), false);
  if (session->format() != OutputFormat::kText) {
    session->printDocument(*answer);
    return kExitOk;
  }
  auto user = answer->find("user");
  if (user == answer->end() || !user->is_string() || user->get<std::string>().empty()) {
    return session->fail({{client::kErrBadResponse, "user", "the whoami answer has no user"}},
                         kExitServer);
  }
  auto admin = answer->find("admin");
  const bool is_admin = admin != answer->end() && admin->is_boolean() && admin->get<bool>();
  io.out << fmt::format("{}{}\n", user->get<std::string>(), is_admin ? " (admin)" : "");
  // What this user's jobs may be charged to in Slurm, the default first (when the site says).
  for (const auto& [key, label] :
       {std::pair{"slurm_accounts", "Slurm accounts"}, std::pair{"qos", "QOS"}}) {
    auto names = answer->find(key);
    if (names == answer->end() || !names->is_array() || names->empty()) continue;
    std::string line;
    for (const auto& name : *names) {
      if (!name.is_string()) continue;
      line +=
          (line.empty() ? "" : ", ") + name.get<std::string>() + (line.empty() ? " (default)" : "");
    }
    io.out << fmt::format("{}: {}\n", label, line);
  }
  const client::ClientConfig& config = session->config();
  session->note(fmt::format("server {} (from {}); token from {}", config.server,
                            config.server_source, config.token_source));
  return kExitOk;
}

void addWhoamiCommand(CLI::App& app, IoSource io) {
  auto flags = std::make_shared<WhoamiFlags>();
  CLI::App* cmd = app.add_subcommand(
      "whoami", "Show the user the server knows your token as (and whether an admin)");
  addServerFlags(*cmd, flags->server);
  cmd->footer(kServerExitCodes);
  bindRunner(*cmd, flags, std::move(io), runWhoami);
}

void addServerCommands(CLI::App& app, IoSource io) {
  addSubmitCommand(app, io);
  addGetCommands(app, io);
  addLogsCommand(app, io);
  addJobActionCommands(app, io);
  addLsCommand(app, io);
  addCpCommand(app, io);
  addUsageCommand(app, io);
  addCapabilitiesCommand(app, io);
  addWhoamiCommand(app, std::move(io));
}

void addServerCommands(CLI::App& app) {
  addServerCommands(app, []() -> CommandIo& { return processIo(); });
}

}  // namespace tuneplane::cli
