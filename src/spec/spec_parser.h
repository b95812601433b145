// Parses a job spec from YAML or JSON text (JSON is parsed as YAML) and runs every
// structural check: unknown keys, wrong types, missing required fields, DNS-label names,
// durations, non-positive counts. Reports every problem, each with its field path
// (e.g. "spec.resources.pools[1].nodes") and a stable code from spec/error_codes.h.
// Knows nothing of the site: site rules live in launch/.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "spec/job_spec.h"

namespace tuneplane::spec {

Checked<JobSpec> parseJobSpec(std::string_view text);
Checked<JobSpec> loadJobSpecFile(const std::string& path);

}  // namespace tuneplane::spec
