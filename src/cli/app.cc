#include "cli/app.h"

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/site_command.h"
#include "client_cli/server_commands.h"

namespace tuneplane::cli {

std::unique_ptr<CLI::App> makeApp() {
  auto app = std::make_unique<CLI::App>(
      "TunePlane: runs ML training jobs on Slurm through slurmrestd.\n"
      "Submit and follow jobs on a TunePlane server (submit, get, describe, logs, events,\n"
      "cancel, attempt, usage, whoami); list and fetch their outputs (ls, cp); check a spec\n"
      "against the server (validate) and see what the site offers (capabilities); run the\n"
      "server (serve); validate (--site) and render job specs offline; check a site (doctor);\n"
      "talk to a site's slurmrestd directly (slurm); move a site's store to PostgreSQL (store\n"
      "copy); draft a site file (site init); add an API user (token add).",
      "tuneplane");
  app->require_subcommand(1);
  app->set_version_flag("--version", kVersionText);
  addServerCommands(*app);
  addValidateCommand(*app);
  addRenderCommand(*app);
  addSlurmCommand(*app);
  addDoctorCommand(*app);
  addServeCommand(*app);
  addStoreCommand(*app);
  addSiteCommand(*app);
  addTokenCommand(*app);
  addCompletionCommand(*app);  // last: it reads the tree the others built
  return app;
}

}  // namespace tuneplane::cli
