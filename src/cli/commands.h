// The `tuneplane` command's subcommands. Each adds itself to the CLI11 app; its callback
// throws CLI::RuntimeError(exit_code) to end the process with that code.
#pragma once

#include <CLI/CLI.hpp>

#include "client_cli/exit_codes.h"  // the exit codes every command shares

namespace tuneplane::cli {

void addValidateCommand(CLI::App& app);  // validate_command.cc
void addRenderCommand(CLI::App& app);    // render_command.cc
void addSlurmCommand(CLI::App& app);     // slurm_command.cc: ping|submit|get|cancel|jobs
void addDoctorCommand(CLI::App& app);    // doctor_command.cc: check a site, submit nothing
void addServeCommand(CLI::App& app);     // serve_command.cc: the daemon (server/daemon.h)
void addStoreCommand(CLI::App& app);     // store_command.cc: store copy (SQLite → PostgreSQL)
void addTokenCommand(CLI::App& app);     // token_command.cc: token add (server.tokens)
// The verbs that talk to `tuneplane serve` (submit, get, describe, events, logs, cancel,
// attempt abandon, whoami) are client_cli/'s: addServerCommands (server_commands.h).

}  // namespace tuneplane::cli
