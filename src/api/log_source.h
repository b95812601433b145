// What GET /v1/jobs/{id}/logs reads: one component's scheduler log through the log reader
// (attempt/log_tail.h: 64 KiB / 2,000-line tail, safe opening, valid UTF-8), behind a seam
// (LogReader) so route tests can inject logs; and what GET /v1/jobs/{id} reads of an attempt's
// files (ResumeStepReader). Thread-safety: free functions, no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "attempt/attempt_files.h"
#include "attempt/log_tail.h"
#include "common/result.h"
#include "store/job_store.h"

namespace tuneplane::api {

using LogStream = attempt::LogStream;
using LogSnapshot = attempt::LogTail;

using LogReader =
    std::function<Result<LogSnapshot>(const std::string& attempt_dir, std::string_view pool,
                                      LogStream stream, attempt::JobState job)>;

// What GET /v1/jobs/{id} reads of an attempt beside the store: the step it started from.
using ResumeStepReader = std::function<std::optional<int64_t>(const std::string& attempt_dir)>;

// attempt::readResumeStep.
std::optional<int64_t> readResumeStep(const std::string& attempt_dir);

// attempt::readLogTail with the default limits.
Result<LogSnapshot> readLog(const std::string& attempt_dir, std::string_view pool, LogStream stream,
                            attempt::JobState job);

// kRanAndEnded when Slurm started the component (it has a start time) and the attempt has
// ended: a log still missing then was never written (the job user's permissions).
attempt::JobState logJobState(const store::AttemptRecord& attempt,
                              const store::ComponentRecord& component);

}  // namespace tuneplane::api
