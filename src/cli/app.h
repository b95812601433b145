// The `tuneplane` command tree: the root CLI11 app with every subcommand added. main() runs
// it; `tuneplane completion` and the CLI tests read the same tree, so what they see cannot
// drift from what the binary parses.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace tuneplane::cli {

inline constexpr const char* kVersionText = "tuneplane 0.1.0";

std::unique_ptr<CLI::App> makeApp();

}  // namespace tuneplane::cli
