// `tuneplane`: the command line of the TunePlane control plane.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "TunePlane: runs ML training jobs on Slurm through slurmrestd.\n"
      "Validate and render job specs, and talk to a site's slurmrestd.",
      "tuneplane"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tuneplane 0.1.0");
  tuneplane::cli::addValidateCommand(app);
  tuneplane::cli::addRenderCommand(app);
  tuneplane::cli::addSlurmCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
