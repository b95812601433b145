// The /v1/jobs routes of ApiServer (api_server.h). A job that is not the caller's is "not
// found" unless the caller is an admin, so no one learns another user's job ids.
#include <algorithm>
#include <charconv>

#include <httplib.h>

#include "api/api_server.h"
#include "api/body_checks.h"
#include "api/json_views.h"
#include "launch/attempt_identity.h"
#include "spec/spec_parser.h"
#include "store/error_codes.h"

namespace tuneplane::api {
namespace {

using nlohmann::json;

constexpr const char* kJobPath = R"(/v1/jobs/([^/]+))";

std::optional<int> parseInt(const std::string& text, int min, int max) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

Error badParameter(const std::string& name, const std::string& why) {
  return {"api.invalid_parameter", name, why};
}

// The status for a failed submit: the spec's problems are 422; the store's are 500.
int submitStatus(const Errors& errors) {
  for (const auto& e : errors) {
    if (store::codes::isStoreCode(e.code)) return 500;
  }
  return 422;
}

json withCurrentAttempt(const store::JobRecord& job, const store::AttemptSummary& attempts) {
  json item = jobSummaryJson(job);
  item["attempt_count"] = attempts.count;
  item["current_attempt"] =
      attempts.last ? attemptJson(*attempts.last, /*with_components=*/false) : json();
  return item;
}

}  // namespace

void ApiServer::installJobRoutes() {
  // Reads a job the caller may see; otherwise answers 404 (or 500) and returns nullopt.
  auto visibleJob = [this](const std::string& id, const Principal& who,
                           httplib::Response& res) -> std::optional<store::JobView> {
    const auto not_found = [&id] { return Error{"api.not_found", "id", "no job '" + id + "'"}; };
    if (!launch::isValidJobId(id)) {
      sendError(res, 404, not_found());
      return std::nullopt;
    }
    auto view = deps_.jobs.get(id);
    if (!view) {
      sendError(res, statusFor(view.error().code), view.error());
      return std::nullopt;
    }
    if (!*view || (!who.admin && (*view)->job.owner != who.user)) {
      sendError(res, 404, not_found());
      return std::nullopt;
    }
    return std::move(**view);
  };
  // Answers 202 with the job as it is now.
  auto acceptedJob = [this](const std::string& id, httplib::Response& res) {
    auto view = deps_.jobs.get(id);
    if (!view || !*view) {
      return sendError(res, 500, {"api.internal", "id", "the job could not be read back"});
    }
    sendJsonText(res, 202, jobJsonText(**view));
  };

  post("/v1/jobs", "/v1/jobs", Access::kUser,
       [this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
         if (auto type = checkContentType(req.get_header_value("Content-Type"), BodyKind::kSpec);
             !type) {
           return sendError(res, 415, type.error());
         }
         if (auto body = checkBodyText(req.body); !body) return sendError(res, 400, body.error());
         auto job = deps_.jobs.submit(req.body, who.user);
         if (!job) return sendErrors(res, submitStatus(job.error()), job.error());
         if (deps_.job_submitted) deps_.job_submitted();
         res.set_header("Location", "/v1/jobs/" + job->id);
         sendJsonText(res, 201, jobJsonText(store::JobView{*job, {}}));
       });

  get("/v1/jobs", "/v1/jobs", Access::kUser,
      [this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
        store::JobQuery query;
        Errors errors;
        if (req.has_param("phase")) {
          const std::string phase = req.get_param_value("phase");
          if (auto parsed = store::parseJobPhase(phase)) {
            query.phase = *parsed;
          } else {
            errors.push_back(badParameter("phase", "'" + phase + "' is not a job phase"));
          }
        }
        if (req.has_param("name")) query.name = req.get_param_value("name");
        if (req.has_param("label")) {
          const std::string label = req.get_param_value("label");
          const auto eq = label.find('=');
          if (eq == std::string::npos || eq == 0) {
            errors.push_back(badParameter("label", "expected label=KEY=VALUE"));
          } else {
            query.label = {label.substr(0, eq), label.substr(eq + 1)};
          }
        }
        if (req.has_param("limit")) {
          if (auto limit = parseInt(req.get_param_value("limit"), 1, 1000)) {
            query.limit = *limit;
          } else {
            errors.push_back(badParameter("limit", "must be an integer 1..1000"));
          }
        }
        query.continue_token = req.get_param_value("continue");
        const std::string owner = req.get_param_value("owner");
        if (who.admin) {
          if (!owner.empty()) query.owner = owner;
        } else if (!owner.empty() && owner != who.user) {
          return sendError(res, 403,
                           {"auth.forbidden", "owner", "only an admin lists other users' jobs"});
        } else {
          query.owner = who.user;
        }
        if (!errors.empty()) return sendErrors(res, 400, errors);
        auto page = deps_.jobs.list(query);
        if (!page) return sendError(res, statusFor(page.error().code), page.error());
        json items = json::array();
        for (std::size_t i = 0; i < page->jobs.size(); ++i) {
          items.push_back(withCurrentAttempt(page->jobs[i], i < page->attempts.size()
                                                                ? page->attempts[i]
                                                                : store::AttemptSummary{}));
        }
        sendJson(res, 200, {{"items", std::move(items)}, {"continue", page->continue_token}});
      });

  get(kJobPath, "/v1/jobs/{id}", Access::kUser,
      [visibleJob](const httplib::Request& req, httplib::Response& res, const Principal& who) {
        if (auto view = visibleJob(req.matches[1], who, res)) {
          sendJsonText(res, 200, jobJsonText(*view));
        }
      });

  get(std::string(kJobPath) + "/events", "/v1/jobs/{id}/events", Access::kUser,
      [this, visibleJob](const httplib::Request& req, httplib::Response& res,
                         const Principal& who) {
        if (!visibleJob(req.matches[1], who, res)) return;
        auto events = deps_.jobs.events(req.matches[1]);
        if (!events) return sendError(res, statusFor(events.error().code), events.error());
        json items = json::array();
        for (const auto& e : *events) items.push_back(eventJson(e));
        sendJson(res, 200, {{"items", std::move(items)}});
      });

  post(std::string(kJobPath) + "/cancel", "/v1/jobs/{id}/cancel", Access::kUser,
       [this, visibleJob, acceptedJob](const httplib::Request& req, httplib::Response& res,
                                       const Principal& who) {
         auto view = visibleJob(req.matches[1], who, res);
         if (!view) return;
         if (auto done = deps_.jobs.cancel(view->job.id, who.user); !done) {
           return sendError(res, statusFor(done.error().code), done.error());
         }
         if (deps_.job_submitted) deps_.job_submitted();  // the loop acts on it now
         acceptedJob(view->job.id, res);
       });

  post(std::string(kJobPath) + R"(/attempts/([0-9]+)/abandon)",
       "/v1/jobs/{id}/attempts/{n}/abandon", Access::kAdmin,
       [this, visibleJob, acceptedJob](const httplib::Request& req, httplib::Response& res,
                                       const Principal& who) {
         auto view = visibleJob(req.matches[1], who, res);
         if (!view) return;
         const auto attempt = parseInt(req.matches[2], 1, 1'000'000);
         if (!attempt) return sendError(res, 404, {"api.not_found", "attempt", "no such attempt"});
         if (auto type = checkContentType(req.get_header_value("Content-Type"), BodyKind::kJson);
             !type) {
           return sendError(res, 415, type.error());
         }
         if (auto body = checkBodyText(req.body); !body) return sendError(res, 400, body.error());
         const json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
         if (!body.is_object() || !body.contains("reason") || !body["reason"].is_string()) {
           return sendError(res, 400,
                            {"api.invalid_body", "reason",
                             "expected {\"reason\": \"why the attempt is abandoned\"}"});
         }
         auto done = deps_.jobs.abandon(view->job.id, *attempt, who.user,
                                        body["reason"].get<std::string>());
         if (!done) return sendError(res, statusFor(done.error().code), done.error());
         if (deps_.job_submitted) deps_.job_submitted();
         acceptedJob(view->job.id, res);
       });

  get(std::string(kJobPath) + "/logs", "/v1/jobs/{id}/logs", Access::kUser,
      [this, visibleJob](const httplib::Request& req, httplib::Response& res,
                         const Principal& who) {
        auto view = visibleJob(req.matches[1], who, res);
        if (!view) return;
        LogStream stream = LogStream::kStdout;
        const std::string stream_name = req.get_param_value("stream");
        if (stream_name == "stderr") {
          stream = LogStream::kStderr;
        } else if (!stream_name.empty() && stream_name != "stdout") {
          return sendError(res, 400, badParameter("stream", "must be stdout or stderr"));
        }
        if (view->attempts.empty()) {
          return sendError(res, 404, {"api.not_found", "attempt", "the job has no attempt yet"});
        }
        const store::AttemptRecord* attempt = &view->attempts.back();
        if (req.has_param("attempt")) {
          const auto n = parseInt(req.get_param_value("attempt"), 1, 1'000'000);
          attempt = nullptr;
          for (const auto& a : view->attempts) {
            if (n && a.number == *n) attempt = &a;
          }
          if (attempt == nullptr) {
            return sendError(res, 404, {"api.not_found", "attempt", "no such attempt"});
          }
        }
        // The component, by pool name (default: the first). Before Slurm answered, the
        // attempt has no component rows: the pools are then the stored spec's.
        std::vector<std::string> pools;
        for (const auto& c : attempt->components) pools.push_back(c.pool);
        if (pools.empty()) {
          if (auto spec = spec::parseJobSpec(view->job.spec)) {
            for (const auto& p : spec->resources.pools) pools.push_back(p.name);
          }
        }
        std::string pool = req.get_param_value("component");
        if (pool.empty() && !pools.empty()) pool = pools.front();
        if (std::find(pools.begin(), pools.end(), pool) == pools.end()) {
          return sendError(res, 404, {"api.not_found", "component", "no component '" + pool + "'"});
        }
        json out = {{"attempt", attempt->number},
                    {"component", pool},
                    {"stream", stream == LogStream::kStdout ? "stdout" : "stderr"},
                    {"content", ""},
                    {"truncated", false},
                    {"bytes", 0},
                    {"lines", 0},
                    {"missing_reason", nullptr}};
        const store::ComponentRecord* component = nullptr;
        for (const auto& c : attempt->components) {
          if (c.pool == pool) component = &c;
        }
        auto log = deps_.logs(attempt->staging_dir, pool, stream, logJobState(*attempt, component));
        if (!log) return sendError(res, statusFor(log.error().code), log.error());
        out["content"] = log->text;
        out["truncated"] = log->truncated;
        out["bytes"] = log->file_bytes;
        out["lines"] = log->lines;
        if (log->missing) out["missing_reason"] = log->reason;
        sendJson(res, 200, out);
      });
}

}  // namespace tuneplane::api
