// POST /v1/jobs until the client knows what happened: a submit whose answer was lost (sent,
// no answer) is sent again with the same Idempotency-Key — the server then creates the job
// once or answers with the job it created the first time (control/job_service.h) — with a
// bounded exponential backoff, riding over a server that is briefly away (refused, 429,
// 502–504) once the first answer was lost. Time comes from an injected Clock and waiting
// from an injected Sleeper (poll.h), so tests drive every retry with a fake clock.
// Thread-safety: one call at a time per ApiClient (as ApiClient).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "client/api_client.h"
#include "client/poll.h"
#include "common/clock.h"

namespace tuneplane::client {

// Waits between the retries: the first, doubled each time up to the most; the retries end
// once the next wait would pass the budget, counted from the first send (a `serve` restart
// takes seconds; the budget is the waiting verbs' patience with an absent server).
inline constexpr std::chrono::milliseconds kSubmitRetryFirstWait{500};
inline constexpr std::chrono::milliseconds kSubmitRetryMaxWait{8000};
inline constexpr std::chrono::milliseconds kSubmitRetryBudget = kDefaultUnreachableGrace;

struct SubmitRetryOptions {
  std::chrono::milliseconds first_wait = kSubmitRetryFirstWait;
  std::chrono::milliseconds max_wait = kSubmitRetryMaxWait;
  std::chrono::milliseconds budget = kSubmitRetryBudget;
};

// Told before each wait: the failure that is retried and the wait before the next send.
using SubmitRetryNotice =
    std::function<void(const ApiError& error, std::chrono::milliseconds wait)>;

// Sends `spec_text` under `idempotency_key` (REQUIRES: not empty) until an answer settles it:
// the job (201 created, or 200 the key's first job), a refusal, or — before any answer was
// lost — a failure that shows nothing happened (not sent: the server unreachable). After a
// lost answer, the last failure when the budget ran out or the wait was interrupted comes
// back as FailureKind::kNoAnswer: the job may exist, under this key.
ApiResult<Json> submitIdempotently(ApiClient& api, std::string_view spec_text,
                                   const std::string& idempotency_key, const Clock& clock,
                                   Sleeper& sleeper, const SubmitRetryNotice& on_retry = {},
                                   const SubmitRetryOptions& options = {});

}  // namespace tuneplane::client
