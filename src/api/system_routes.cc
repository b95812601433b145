// The routes of ApiServer (api_server.h) that are not about one job: validation, the refused
// kinds, capabilities, doctor's checks (admin), whoami, the OpenAPI document, health, readiness
// and metrics. /healthz, /readyz, /metrics and /v1/openapi.json are public (probes, scrapers and
// API tools carry no token; they reveal no job, user or spec — only counts by phase and by route
// template, and the routes themselves). Everything else under /v1 needs a token.
#include "api/api_server.h"
#include "api/body_checks.h"
#include "api/capabilities.h"
#include "api/error_codes.h"
#include "api/job_charge.h"
#include "api/json_views.h"
#include "api/openapi_document.h"
#include "api/spec_intake.h"
#include "launch/launch_summary.h"

namespace tuneplane::api {
namespace {

using nlohmann::json;

// The one summary of a valid job (launch_summary.h, shared with `tuneplane validate -o
// json`), and the API's warnings (none yet).
json validationSummary(const launch::LaunchRequest& request) {
  json summary = launch::summaryJson(request);
  summary["warnings"] = json::array();
  return summary;
}

}  // namespace

void ApiServer::installSystemRoutes() {
  post("/v1/validate", Access::kUser,
       [this](const HttpRequest& req, HttpResponse& res, const Principal& who) {
         // Judged as POST /v1/jobs would judge it for this user (spec_intake.h).
         auto charged = takeInSpec(req, who, deps_.launcher.site().site.staging_root);
         if (!charged) return sendErrors(res, charged.error().status, charged.error().errors);
         auto prepared = deps_.launcher.validate(*charged);
         if (!prepared) return sendErrors(res, 422, prepared.error());
         sendJson(res, 200, validationSummary(prepared->request));
       });

  for (const auto& [path, kind] : {std::pair{"/v1/playgrounds", "Playground"},
                                   std::pair{"/v1/deployments", "ModelDeployment"}}) {
    post(path, Access::kUser,
         [kind = kind](const HttpRequest&, HttpResponse& res, const Principal&) {
           sendError(res, 422, kindRefusal(kind));
         });
  }

  get("/v1/capabilities", Access::kUser,
      [this](const HttpRequest&, HttpResponse& res, const Principal&) {
        sendJson(res, 200,
                 capabilitiesJson(deps_.launcher.site(),
                                  deps_.slurm_api ? deps_.slurm_api() : nlohmann::json(),
                                  options_.workdir));
      });

  get("/v1/doctor", Access::kAdmin,
      [this](const HttpRequest&, HttpResponse& res, const Principal&) {
        if (!deps_.doctor) {
          return sendError(res, 501,
                           {"api.not_available", "", "this server does not run doctor's checks"});
        }
        auto report = deps_.doctor();
        if (!report) {
          return sendError(res, report.error().code == codes::kBusy ? 429 : 500, report.error());
        }
        sendJson(res, 200, *report);
      });

  get("/v1/openapi.json", Access::kPublic,
      [](const HttpRequest&, HttpResponse& res, const Principal&) {
        const std::string_view document = openApiDocument();
        res.status = 200;
        res.setBody(std::string(document), "application/json");
      });

  get("/v1/whoami", Access::kUser, [](const HttpRequest&, HttpResponse& res, const Principal& who) {
    sendJson(res, 200,
             {{"user", who.user},
              {"admin", who.admin},
              {"slurm_accounts", who.slurm_accounts},
              {"qos", who.qos}});
  });

  get("/healthz", Access::kPublic, [](const HttpRequest&, HttpResponse& res, const Principal&) {
    sendJson(res, 200, {{"status", "ok"}});
  });

  get("/readyz", Access::kPublic, [this](const HttpRequest&, HttpResponse& res, const Principal&) {
    Errors errors;
    json checks = json::object();
    if (auto counted = deps_.store.countJobsByPhase(); counted) {
      checks["store"] = "ok";
    } else {
      checks["store"] = counted.error().message;
      errors.push_back({"api.store_unavailable", "store", counted.error().message});
    }
    if (deps_.slurm_ready) {
      if (auto answered = deps_.slurm_ready(); answered) {
        checks["slurm"] = "ok";
      } else {
        checks["slurm"] = answered.error().message;
        errors.push_back({"api.slurm_unavailable", "slurm", answered.error().message});
      }
    }
    if (!errors.empty()) {
      json body = errorsJson(errors);
      body["checks"] = std::move(checks);
      return sendJson(res, 503, body);
    }
    sendJson(res, 200, {{"status", "ready"}, {"checks", std::move(checks)}});
  });

  get("/metrics", Access::kPublic, [this](const HttpRequest&, HttpResponse& res, const Principal&) {
    std::string text =
        "# HELP tuneplane_jobs Jobs in the store, by phase.\n"
        "# TYPE tuneplane_jobs gauge\n";
    if (auto counts = deps_.store.countJobsByPhase()) {
      for (const auto& [phase, count] : *counts) {
        text += "tuneplane_jobs{phase=\"" + std::string(phase::toString(phase)) + "\"} " +
                std::to_string(count) + "\n";
      }
    }
    if (auto ended = deps_.store.countEndedAttempts()) {
      text += renderAttemptOutcomes(*ended);
    }
    text += deps_.metrics.render();
    if (deps_.extra_metrics) text += deps_.extra_metrics();
    if (deps_.usage) text += deps_.usage->metricsText();  // cached: usage_service.h
    res.status = 200;
    res.setBody(std::move(text), "text/plain; version=0.0.4; charset=utf-8");
  });
}

}  // namespace tuneplane::api
