// The text a valid spec's summary prints as, from the one summary document
// (launch/launch_summary.h: POST /v1/validate's answer, and `tuneplane validate --site`'s
// -o json): the job, its runtime, which time limit applies and where it comes from, and each
// component. Both ways of validating print through here, so they read the same. Pure.
#pragma once

#include <iosfwd>

#include "client/api_client.h"

namespace tuneplane::cli {

// Lines "valid: NAME (FRAMEWORK)", "  runtime: …", "  time limit: …", "  component N: …".
// Members missing from `summary` (an older server) are left out, never guessed.
void printValidationSummary(std::ostream& out, const client::Json& summary);

}  // namespace tuneplane::cli
