// The /v1/jobs routes of ApiServer (api_server.h), one named handler each. A job that is not
// the caller's is "not found" unless the caller is an admin, so no one learns another
// user's job ids. Query strings are parsed by job_queries.h's pure functions.
#include <algorithm>

#include "api/api_server.h"
#include "api/body_checks.h"
#include "api/job_charge.h"
#include "api/job_lookup.h"
#include "api/job_queries.h"
#include "api/job_waiting.h"
#include "api/json_views.h"
#include "api/spec_intake.h"
#include "common/idempotency_key.h"
#include "control/error_codes.h"
#include "staging/error_codes.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "staging/workdir_store.h"
#include "store/error_codes.h"

namespace tuneplane::api {
namespace {

using nlohmann::json;

Error notFound(const std::string& field, const std::string& message) {
  return {"api.not_found", field, message};
}

// The status for a failed submit: the spec's problems are 422; an Idempotency-Key bound to
// another request 409; the store's are 500, or 503 when the database could not be had in
// time, or a key was bound and not found (try again).
int submitStatus(const Errors& errors) {
  for (const auto& e : errors) {
    if (e.code == control::codes::kIdempotencyKeyReused) return 409;
    if (e.code == store::codes::kBusy || e.code == store::codes::kKeyExists) return 503;
    if (store::codes::isStoreCode(e.code)) return 500;
  }
  return 422;
}

json withCurrentAttempt(const store::JobRecord& job, const store::AttemptSummary& attempts,
                        const QueueSnapshot* queue) {
  json item = jobSummaryJson(job);
  item["attempt_count"] = attempts.count;
  item["current_attempt"] =
      attempts.last ? attemptJson(*attempts.last, /*with_components=*/false) : json();
  item["waiting"] =
      waitingJson(attempts.last ? summaryWaiting(*attempts.last, queue) : std::nullopt);
  return item;
}

// The handlers, over the server's dependencies.
class JobRoutes {
 public:
  explicit JobRoutes(const ApiDependencies& deps) : deps_(deps) {}

  // What Slurm charges a stored job to: its spec's choice, else the site's default.
  JobCharge charge(std::string_view spec_text) const {
    return chargeOf(spec_text, deps_.launcher.site().site.slurm);
  }

  // POST /v1/jobs: accept a spec (201 with Location), or its problems (422; the store's: 500).
  // With an Idempotency-Key (job_service.h): the key's first job again (200, Location,
  // Idempotent-Replayed: true), or 409 when the key came with another body; a malformed key
  // is 400 before anything else is read.
  void submit(const HttpRequest& req, HttpResponse& res, const Principal& who) const {
    std::optional<control::JobService::SubmitKey> key;
    if (req.hasHeader(kIdempotencyKeyHeader)) {
      if (req.headerCount(kIdempotencyKeyHeader) > 1) {
        return sendError(
            res, 400,
            {"api.invalid_idempotency_key", kIdempotencyKeyHeader,
             std::string("send one ") + kIdempotencyKeyHeader + " header, not several"});
      }
      const std::string value = req.header(kIdempotencyKeyHeader);
      if (auto valid = checkIdempotencyKey(value); !valid) {
        return sendError(res, 400, valid.error());
      }
      // The body as sent stands for the request: a retry sends the same bytes.
      key = control::JobService::SubmitKey{value, staging::sha256Hex(req.body)};
    }
    // Judged as POST /v1/validate judges it (spec_intake.h): the charge written in.
    auto charged = takeInSpec(req, who, deps_.launcher.site().site.staging_root);
    if (!charged) return sendErrors(res, charged.error().status, charged.error().errors);
    if (!key) {
      auto job = deps_.jobs.submit(*charged, who.user, who.unix_user);
      if (!job) return sendErrors(res, submitStatus(job.error()), job.error());
      return created(store::JobView{std::move(*job), {}}, res);
    }
    auto done = deps_.jobs.submit(*charged, who.user, who.unix_user, *key);
    if (!done) return sendErrors(res, submitStatus(done.error()), done.error());
    if (!done->replayed) return created(done->view, res);
    res.setHeader("Location", "/v1/jobs/" + done->view.job.id);
    res.setHeader(kIdempotentReplayedHeader, "true");
    sendJsonText(res, 200, jobText(done->view));
  }

  // GET /v1/jobs: one page of the jobs the caller may see, each with its current attempt.
  void list(const HttpRequest& req, HttpResponse& res, const Principal& who) const {
    auto query = parseJobListQuery(req.params, who);
    if (!query) return sendErrors(res, query.error().status, query.error().errors);
    auto page = deps_.jobs.list(*query);
    if (!page) return sendError(res, statusFor(page.error().code), page.error());
    // Slurm's queue, only when a job of the page waits in it.
    std::shared_ptr<const QueueSnapshot> queue;
    int64_t newest = 0;
    for (const auto& attempts : page->attempts) {
      if (attempts.last && waitsInQueue(*attempts.last)) {
        newest = std::max(newest, attempts.last->submitted_ms);
      }
    }
    if (newest > 0 && deps_.pending_queue) queue = deps_.pending_queue(newest);
    json items = json::array();
    for (std::size_t i = 0; i < page->jobs.size(); ++i) {
      items.push_back(withCurrentAttempt(
          page->jobs[i], i < page->attempts.size() ? page->attempts[i] : store::AttemptSummary{},
          queue.get()));
    }
    sendJson(res, 200, {{"items", std::move(items)}, {"continue", page->continue_token}});
  }

  // GET /v1/jobs/{id}
  void get(const HttpRequest& req, HttpResponse& res, const Principal& who) const {
    if (auto view = visibleJob(req.path_params[0], who, res)) {
      sendJsonText(res, 200, jobText(*view));
    }
  }

  // GET /v1/jobs/{id}/events
  void events(const HttpRequest& req, HttpResponse& res, const Principal& who) const {
    if (!visibleJob(req.path_params[0], who, res)) return;
    auto events = deps_.jobs.events(req.path_params[0]);
    if (!events) return sendError(res, statusFor(events.error().code), events.error());
    json items = json::array();
    for (const auto& e : *events) items.push_back(eventJson(e));
    sendJson(res, 200, {{"items", std::move(items)}});
  }

  // POST /v1/jobs/{id}/cancel: 202 with the job as it is now; the loop acts on it at once.
  void cancel(const HttpRequest& req, HttpResponse& res, const Principal& who) const {
    auto view = visibleJob(req.path_params[0], who, res);
    if (!view) return;
    if (auto done = deps_.jobs.cancel(view->job.id, who.user); !done) {
      return sendError(res, statusFor(done.error().code), done.error());
    }
    if (deps_.job_submitted) deps_.job_submitted();  // the loop acts on it now
    acceptedJob(view->job.id, res);
  }

  // POST /v1/jobs/{id}/attempts/{n}/abandon (admin), body {"reason": "…"}.
  void abandon(const HttpRequest& req, HttpResponse& res, const Principal& who) const {
    auto view = visibleJob(req.path_params[0], who, res);
    if (!view) return;
    const auto attempt = parseBoundedInt(req.path_params[1], 1, 1'000'000);
    if (!attempt) return sendError(res, 404, notFound("attempt", "no such attempt"));
    if (auto type = checkContentType(req.header("Content-Type"), BodyKind::kJson); !type) {
      return sendError(res, 415, type.error());
    }
    if (auto body = checkBodyText(req.body); !body) return sendError(res, 400, body.error());
    const json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (!body.is_object() || !body.contains("reason") || !body["reason"].is_string()) {
      return sendError(res, 400,
                       {"api.invalid_body", "reason",
                        "expected {\"reason\": \"why the attempt is abandoned\"}"});
    }
    auto done =
        deps_.jobs.abandon(view->job.id, *attempt, who.user, body["reason"].get<std::string>());
    if (!done) return sendError(res, statusFor(done.error().code), done.error());
    if (deps_.job_submitted) deps_.job_submitted();
    acceptedJob(view->job.id, res);
  }

  // GET /v1/jobs/{id}/logs: the tail of one component's log of one attempt.
  void logs(const HttpRequest& req, HttpResponse& res, const Principal& who) const {
    auto view = visibleJob(req.path_params[0], who, res);
    if (!view) return;
    auto query = parseLogQuery(req.params);
    if (!query) return sendErrors(res, query.error().status, query.error().errors);
    if (view->attempts.empty()) {
      return sendError(res, 404, notFound("attempt", "the job has no attempt yet"));
    }
    const store::AttemptRecord* attempt = &view->attempts.back();
    if (query->attempt_given) {
      const auto same = [&](const store::AttemptRecord& a) {
        return a.number == query->attempt_number;
      };
      const auto found = std::find_if(view->attempts.rbegin(), view->attempts.rend(), same);
      if (found == view->attempts.rend()) {
        return sendError(res, 404, notFound("attempt", "no such attempt"));
      }
      attempt = &*found;
    }
    // Every attempt is stored with one component row per pool of its spec from the moment it
    // is created (control::beginAttempt; a spec has at least one pool), and the rows are only
    // ever replaced by Slurm's non-empty set. An attempt without one is a store this server
    // did not write: an invariant broken, not a request to refuse.
    if (attempt->components.empty()) {
      return sendError(
          res, 500,
          {"api.internal", "attempt",
           "attempt " + std::to_string(attempt->number) + " has no component on record"});
    }
    const store::ComponentRecord* component = &attempt->components.front();
    if (!query->component.empty()) {
      const auto named =
          std::find_if(attempt->components.begin(), attempt->components.end(),
                       [&](const store::ComponentRecord& c) { return c.pool == query->component; });
      if (named == attempt->components.end()) {
        return sendError(res, 404,
                         notFound("component", "no component '" + query->component + "'"));
      }
      component = &*named;
    }
    const std::string& pool = component->pool;
    auto log =
        deps_.logs(attempt->staging_dir, pool, query->stream, logJobState(*attempt, *component));
    if (!log) return sendError(res, statusFor(log.error().code), log.error());
    sendJson(res, 200,
             {{"attempt", attempt->number},
              {"component", pool},
              {"stream", query->stream == attempt::LogStream::kStdout ? "stdout" : "stderr"},
              {"content", log->text},
              {"truncated", log->truncated},
              {"bytes", log->file_bytes},
              {"lines", log->lines},
              {"missing_reason", log->missing ? json(log->reason) : json(nullptr)}});
  }

 private:
  // The job's JSON, with why it waits when it waits in Slurm's queue.
  std::string jobText(const store::JobView& view) const {
    std::shared_ptr<const QueueSnapshot> queue;
    if (!view.attempts.empty() && waitsInQueue(view.attempts.back()) && deps_.pending_queue) {
      queue = deps_.pending_queue(view.attempts.back().submitted_ms);
    }
    return jobJsonText(view, charge(view.job.spec), resumeSteps(view),
                       jobWaiting(view, queue.get()));
  }

  std::optional<store::JobView> visibleJob(const std::string& id, const Principal& who,
                                           HttpResponse& res) const {
    return api::visibleJob(deps_.jobs, id, who, res);
  }

  // Answers 201 with the job just accepted, and wakes the control loop to stage it.
  void created(const store::JobView& view, HttpResponse& res) const {
    if (deps_.job_submitted) deps_.job_submitted();
    res.setHeader("Location", "/v1/jobs/" + view.job.id);
    sendJsonText(res, 201, jobJsonText(view, charge(view.job.spec)));
  }

  // Answers 202 with the job as it is now.
  void acceptedJob(const std::string& id, HttpResponse& res) const {
    auto view = deps_.jobs.get(id);
    if (!view || !*view) {
      return sendError(res, 500, {"api.internal", "id", "the job could not be read back"});
    }
    sendJsonText(res, 202, jobText(**view));
  }

  // The step each attempt started from, where its script recorded one: read only for
  // attempts that reached Slurm (one small file each; the others cannot have one).
  ResumeSteps resumeSteps(const store::JobView& view) const {
    ResumeSteps steps;
    if (!deps_.resume_step) return steps;
    for (const store::AttemptRecord& a : view.attempts) {
      if (a.submitted_ms <= 0 || a.staging_dir.empty()) continue;
      if (auto step = deps_.resume_step(a.staging_dir)) steps[a.number] = *step;
    }
    return steps;
  }

  const ApiDependencies& deps_;
};

}  // namespace

void ApiServer::installJobRoutes() {
  auto routes = std::make_shared<const JobRoutes>(deps_);
  const auto bind = [routes](void (JobRoutes::*handler)(const HttpRequest&, HttpResponse&,
                                                        const Principal&) const) {
    return [routes, handler](const HttpRequest& req, HttpResponse& res, const Principal& who) {
      ((*routes).*handler)(req, res, who);
    };
  };
  post("/v1/jobs", Access::kUser, bind(&JobRoutes::submit));
  get("/v1/jobs", Access::kUser, bind(&JobRoutes::list));
  get("/v1/jobs/{id}", Access::kUser, bind(&JobRoutes::get));
  get("/v1/jobs/{id}/events", Access::kUser, bind(&JobRoutes::events));
  post("/v1/jobs/{id}/cancel", Access::kUser, bind(&JobRoutes::cancel));
  post("/v1/jobs/{id}/attempts/{n}/abandon", Access::kAdmin, bind(&JobRoutes::abandon));
  get("/v1/jobs/{id}/logs", Access::kUser, bind(&JobRoutes::logs));
}

}  // namespace tuneplane::api
