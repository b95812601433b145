// See job_lookup.h.
#include "api/job_lookup.h"

#include "api/api_server.h"
#include "launch/attempt_identity.h"

namespace tuneplane::api {

std::optional<store::JobView> visibleJob(control::JobService& jobs, const std::string& id,
                                         const Principal& who, HttpResponse& res) {
  const auto not_found = [&id] { return Error{"api.not_found", "id", "no job '" + id + "'"}; };
  if (!launch::isValidJobId(id)) {
    sendError(res, 404, not_found());
    return std::nullopt;
  }
  auto view = jobs.get(id);
  if (!view) {
    sendError(res, statusFor(view.error().code), view.error());
    return std::nullopt;
  }
  if (!*view || (!who.admin && (*view)->job.owner != who.user)) {
    sendError(res, 404, not_found());
    return std::nullopt;
  }
  return std::move(**view);
}

}  // namespace tuneplane::api
