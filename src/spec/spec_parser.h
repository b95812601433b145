// Parses a job spec from YAML or JSON text (JSON is parsed as YAML) and runs every
// structural check: unknown keys, wrong types, missing required fields, DNS-label names,
// durations, non-positive counts. Reports every problem, each with its field path
// (e.g. "spec.resources.pools[1].nodes") and a stable code from spec/error_codes.h.
// Knows nothing of the site: site rules live in launch/. Pure apart from the file loaders.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "spec/job_spec.h"
#include "spec/partial_spec.h"

namespace tuneplane::spec {

// Everything that could be read, with every structural error: for checks that go on past
// the structural ones (launch::judgeSpec) so one pass reports every problem.
PartialSpec parsePartialJobSpec(std::string_view text);
// The same from a file; an unreadable file is "spec.unreadable_file" (field: the path).
PartialSpec loadPartialJobSpecFile(const std::string& path);

// A complete spec, or its structural errors.
Checked<JobSpec> parseJobSpec(std::string_view text);
Checked<JobSpec> loadJobSpecFile(const std::string& path);

}  // namespace tuneplane::spec
