// The one intake of a job spec: POST /v1/jobs and POST /v1/validate judge a body alike, so a
// spec validate passes is one submit takes, for the same caller. In order: its content type
// (415), its text (400), the account and QOS it is charged to against the caller's token, the
// caller's defaults written in when the spec names none (job_charge.h; 422), and its workdir,
// which must be one of the caller's uploads (POST /v1/workdirs; 422 workdir.unknown, or 500
// when the staging root cannot be read). Thread-safety: a function of its arguments (it reads
// the staging root).
#pragma once

#include <string>
#include <string_view>

#include "api/authenticator.h"
#include "api/http_message.h"
#include "common/result.h"

namespace tuneplane::api {

// Why a spec was not taken in: the HTTP status and the errors to answer with.
struct IntakeRefusal {
  int status = 422;
  Errors errors;
};

// The charged spec text, or the refusal. `staging_root`: the site's, where uploads live.
tl::expected<std::string, IntakeRefusal> takeInSpec(const HttpRequest& req, const Principal& who,
                                                    const std::string& staging_root);

}  // namespace tuneplane::api
