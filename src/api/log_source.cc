// See log_source.h.
#include "api/log_source.h"

namespace tuneplane::api {

Result<LogSnapshot> readLog(const std::string& attempt_dir, std::string_view pool, LogStream stream,
                            attempt::JobState job) {
  return attempt::readLogTail(attempt_dir, pool, stream, job);
}

std::optional<int64_t> readResumeStep(const std::string& attempt_dir) {
  return attempt::readResumeStep(attempt_dir);
}

attempt::JobState logJobState(const store::AttemptRecord& attempt,
                              const store::ComponentRecord& component) {
  const bool ran = component.start_time > 0;
  return ran && attempt.ended_ms > 0 ? attempt::JobState::kRanAndEnded
                                     : attempt::JobState::kMayStillWrite;
}

}  // namespace tuneplane::api
