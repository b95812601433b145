// `tuneplane site init`: drafts a site file from the cluster (siteinit/site_draft.h) by
// asking the site's slurmrestd for its nodes and partitions.
#pragma once

#include <CLI/CLI.hpp>

namespace tuneplane::cli {

void addSiteCommand(CLI::App& app);

}  // namespace tuneplane::cli
