// GET /v1/usage (api_server.h): CPU-hours and GPU-hours from Slurm's own accounting
// (usage_service.h, usage_report.h), for any token: an admin sees every user's runs, a user
// their own. A server without a usage service (ApiDependencies::usage unset), or a site whose
// slurmrestd has no /slurmdb/ routes, answers 501 usage.accounting_unavailable: never a figure
// that slurmdbd did not give.
#include "api/api_server.h"
#include "api/usage_service.h"

namespace tuneplane::api {

void ApiServer::installUsageRoutes() {
  get("/v1/usage", Access::kUser,
      [this](const HttpRequest& req, HttpResponse& res, const Principal& who) {
        auto request = parseUsageQuery(req.params);
        if (!request) return sendErrors(res, 400, request.error());
        if (!deps_.usage) {
          return sendError(res, 501,
                           {usage_codes::kAccountingUnavailable, "",
                            "accounting is not available: this server does not read slurmdbd"});
        }
        auto report = deps_.usage->report(*request, who);
        if (!report) {
          const int status = UsageService::statusFor(report.error());
          if (status == 429) res.setHeader("Retry-After", "5");
          return sendError(res, status, report.error());
        }
        sendJson(res, 200, usageReportJson(*report));
      });
}

}  // namespace tuneplane::api
