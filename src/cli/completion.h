// Shell completion for `tuneplane`, generated from the CLI11 command tree itself (every
// subcommand, alias and flag, at every level), so it cannot drift from what the binary
// parses. `tuneplane completion bash` prints it.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace tuneplane::cli {

// A bash completion script for the tree under `root` (the program is root's name): source it,
// or install it as /usr/share/bash-completion/completions/<name>. Words after a value-taking
// flag and positional arguments fall back to file names.
std::string bashCompletion(const CLI::App& root);

// Adds `completion SHELL` (bash only) to `app`; it prints bashCompletion(app).
void addCompletionCommand(CLI::App& app);

}  // namespace tuneplane::cli
