// `tuneplane`: the command line of the TunePlane control plane.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/run_app.h"
#include "client_cli/server_commands.h"

int main(int argc, char** argv) {
  // Libraries log through spdlog (e.g. the Slurm client's retries), whose default logger
  // writes to stdout: send logs to stderr so stdout holds only a command's output and
  // `--output json` always parses.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "tuneplane", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  CLI::App app{
      "TunePlane: runs ML training jobs on Slurm through slurmrestd.\n"
      "Submit and follow jobs on a TunePlane server (submit, get, describe, logs, events,\n"
      "cancel, attempt, whoami); run the server (serve); validate and render job specs\n"
      "offline; check a site (doctor); talk to a site's slurmrestd directly (slurm).",
      "tuneplane"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tuneplane 0.1.0");
  tuneplane::cli::addServerCommands(app);
  tuneplane::cli::addValidateCommand(app);
  tuneplane::cli::addRenderCommand(app);
  tuneplane::cli::addSlurmCommand(app);
  tuneplane::cli::addDoctorCommand(app);
  tuneplane::cli::addServeCommand(app);
  return tuneplane::cli::runApp(app, std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                std::cerr);
}
