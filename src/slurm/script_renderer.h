// LaunchRequest → the batch script (bash) that slurmrestd runs on the first node of
// component 0. Pure. Every user-controlled string is single-quoted by shellQuote(), so no
// value can become shell syntax. See the README for the script's structure.
#pragma once

#include <string>
#include <string_view>

#include "launch/launch_request.h"

namespace tuneplane::slurm {

std::string renderBatchScript(const launch::LaunchRequest& request);

// One shell word: single-quoted, with embedded single quotes as '\''. Safe for any bytes.
std::string shellQuote(std::string_view value);

}  // namespace tuneplane::slurm
