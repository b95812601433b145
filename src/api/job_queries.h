// The query strings of the /v1/jobs routes, parsed as pure functions of the decoded
// parameters and the caller: what the handlers (job_routes.cc) hand to the store and the
// log reader, or the answer that refuses the request. A parameter given twice counts by its
// first value.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <tl/expected.hpp>

#include "api/authenticator.h"
#include "api/http_message.h"
#include "attempt/log_tail.h"
#include "common/result.h"
#include "store/job_store.h"

namespace tuneplane::api {

// A request refused before it reaches the store: the status and the errors to answer.
struct Refusal {
  int status = 400;
  Errors errors;
};

// text as a decimal integer in [min, max]; nullopt for anything else ("", "+1", "1x", …).
std::optional<int> parseBoundedInt(const std::string& text, int min, int max);

// GET /v1/jobs: phase, name, label (KEY=VALUE), limit (1..1000), continue, owner. A user's
// list is their own: naming another owner is 403 (ahead of any 400); an admin lists every
// owner's jobs, or the one named. Otherwise every bad parameter is one error of a 400
// ("api.invalid_parameter", naming it).
tl::expected<store::JobQuery, Refusal> parseJobListQuery(const QueryParams& params,
                                                         const Principal& who);

// GET /v1/jobs/{id}/logs: stream (stdout, the default, or stderr), attempt (absent: the
// latest), component (absent: the first pool). Only the stream can be refused here (400);
// an attempt or a component the job does not have is the handler's 404.
struct LogQuery {
  attempt::LogStream stream = attempt::LogStream::kStdout;
  bool attempt_given = false;         // `attempt` was in the query …
  std::optional<int> attempt_number;  // … and read as 1..1,000,000 (else: no such attempt)
  std::string component;              // empty: the first
};
tl::expected<LogQuery, Refusal> parseLogQuery(const QueryParams& params);

}  // namespace tuneplane::api
