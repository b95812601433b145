// The `tuneplane` command's subcommands. Each adds itself to the CLI11 app; its callback
// throws CLI::RuntimeError(exit_code) to end the process with that code.
// Exit codes scripts can trust: 0 success, 1 operational failure (I/O, Slurm unreachable),
// 2 invalid input or refusal (the error on stderr), 3 authentication failed,
// 4 outcome unknown (a submit that may have reached Slurm).
#pragma once

#include <CLI/CLI.hpp>

namespace tuneplane::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitInvalid = 2;
inline constexpr int kExitAuth = 3;
inline constexpr int kExitUnknownOutcome = 4;

void addValidateCommand(CLI::App& app);  // validate_command.cc
void addRenderCommand(CLI::App& app);    // render_command.cc
void addSlurmCommand(CLI::App& app);     // slurm_command.cc: ping|submit|get|cancel|jobs
void addDoctorCommand(CLI::App& app);    // doctor_command.cc: check a site, submit nothing
void addServeCommand(CLI::App& app);     // serve_command.cc: the daemon (api/daemon.h)

}  // namespace tuneplane::cli
