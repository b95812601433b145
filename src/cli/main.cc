// `tuneplane`: the command line of the TunePlane control plane.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "cli/app.h"
#include "cli/run_app.h"

int main(int argc, char** argv) {
  // Libraries log through spdlog (e.g. the Slurm client's retries), whose default logger
  // writes to stdout: send logs to stderr so stdout holds only a command's output and
  // `--output json` always parses.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "tuneplane", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  auto app = tuneplane::cli::makeApp();
  return tuneplane::cli::runApp(*app, std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                std::cerr);
}
