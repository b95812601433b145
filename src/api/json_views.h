// The /v1 API's objects as JSON (docs/operators.md, "tuneplane serve and the /v1 API"): a job
// (full, or the list's summary), its attempts and components, events, and errors. Times are RFC
// 3339 UTC with milliseconds, null when unset. Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/job_charge.h"
#include "api/job_waiting.h"
#include "common/result.h"
#include "store/job_store.h"

namespace tuneplane::api {

// "2026-12-03T05:07:38.123Z"; null for 0 (unset).
nlohmann::json timeJson(int64_t unix_ms);
// The same text; "" for 0 (unset).
std::string timeText(int64_t unix_ms);

nlohmann::json componentJson(const store::ComponentRecord& component);
// What the API reads about attempts from their files, beside the store's records: the step
// each started from (attempt::readResumeStep), by attempt number; an attempt not named here
// is not known to have said (its resume_from_step is null).
using ResumeSteps = std::map<int, int64_t>;
// `with_components`: false for the list's current_attempt summary, which has neither the
// components nor resume_from_step (the list reads no files).
nlohmann::json attemptJson(const store::AttemptRecord& attempt, bool with_components,
                           std::optional<int64_t> resume_from_step = std::nullopt);
// The SHA-256 (hex) of the code folder a spec text names (spec.workdir), nullopt for none.
// A text without the word "workdir" and without a backslash (an escape) names none, and is
// not parsed.
std::optional<std::string> specWorkdir(std::string_view spec_text);

// The job's attempts that ended preempted (issue 47): none of them used one of
// spec.retry.max_attempts; each used one of max_preemptions.
int64_t preemptionCount(const store::JobView& view);

// GET /v1/jobs/{id}: the job with its spec, every attempt (with `steps`), how many were
// preempted ("preemptions"), what Slurm
// charges it to (`charge`: job_charge.h's chargeOf, as "scheduling": {"account", "qos"}),
// why it waits in Slurm's queue (`waiting`: job_waiting.h; null when it does not), and the
// code it ships ("workdir": {"sha256", "reference", "path"}, null for none: specWorkdir).
nlohmann::json jobJson(const store::JobView& view, const JobCharge& charge = {},
                       const ResumeSteps& steps = {},
                       const std::optional<JobWaiting>& waiting = std::nullopt);
// dump(jobJson(view, charge, steps, waiting)), byte for byte, written without building the
// tree first (json_text.h): the answer of the API's most frequent call.
std::string jobJsonText(const store::JobView& view, const JobCharge& charge = {},
                        const ResumeSteps& steps = {},
                        const std::optional<JobWaiting>& waiting = std::nullopt);
// One item of GET /v1/jobs: no spec and no attempts; attempt_count and current_attempt
// instead. `attempts` may be empty (the list does not read them).
nlohmann::json jobSummaryJson(const store::JobRecord& job);
nlohmann::json eventJson(const store::EventRecord& event);

// {"errors": [{code, field, message}, …]}
nlohmann::json errorsJson(const Errors& errors);

// Serialises for a response: invalid UTF-8 in a string (a log, a spec) becomes U+FFFD
// instead of throwing.
std::string dump(const nlohmann::json& value);

}  // namespace tuneplane::api
