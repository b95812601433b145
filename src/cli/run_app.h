// Parses a command line on the `tuneplane` CLI11 app and runs the command it names, turning
// CLI11's outcomes into the exit codes of commands.h: a command's own code, 0 for --help and
// --version, 2 for every usage error. main() and the in-process CLI tests share it.
// Thread-safety: one parse at a time per app.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tuneplane::cli {

// `args` without the program name. Help and usage errors go to `out` and `err`.
int runApp(CLI::App& app, std::vector<std::string> args, std::ostream& out, std::ostream& err);

}  // namespace tuneplane::cli
