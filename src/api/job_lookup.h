// How every /v1/jobs/{id}… route reads the job it is about: a job that is not the caller's
// reads as "not found" unless the caller is an admin, so no one learns another user's job
// ids (and an id that cannot be a job id is not looked up).
#pragma once

#include <optional>
#include <string>

#include "api/authenticator.h"
#include "api/http_message.h"
#include "control/job_service.h"
#include "store/job_store.h"

namespace tuneplane::api {

// The job `id` if `who` may see it; otherwise answers 404 (or the store's 500) on `res` and
// returns nullopt.
std::optional<store::JobView> visibleJob(control::JobService& jobs, const std::string& id,
                                         const Principal& who, HttpResponse& res);

}  // namespace tuneplane::api
