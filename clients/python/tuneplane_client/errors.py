"""The client's exceptions: the API's Error schema ({"code", "field", "message"}) with the
HTTP status, or the client's own code when no usable answer came (client.*)."""


class TunePlaneError(Exception):
    """A refusal or failure. `status` is the HTTP status (None when no answer came); `code`,
    `field` and `message` are the first of `errors`, the API's errors[] (every problem of a
    refused spec, each a dict with code, field and message)."""

    def __init__(self, status, code, field, message, errors=None):
        self.status = status
        self.code = code
        self.field = field or ""
        self.message = message
        self.errors = list(errors) if errors else [
            {"code": code, "field": self.field, "message": message}]
        super().__init__(str(self))

    def __str__(self):
        head = f"HTTP {self.status} " if self.status else ""
        where = f" ({self.field})" if self.field else ""
        more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        return f"{head}{self.code}{where}: {self.message}{more}"

    @property
    def transient(self):
        """Whether asking again later may succeed: no answer, or 429, 502, 503, 504."""
        return self.status in (None, 429, 502, 503, 504) and self.code not in (
            "client.no_token", "client.bad_response") and not self.code.startswith("config.") \
            and not self.code.startswith("cli.")


class SubmitOutcomeUnknown(TunePlaneError):
    """A submit was sent, its answer was lost, and the server stayed away through every retry:
    the job may exist. Submitting the same spec with `idempotency_key=e.idempotency_key` once
    the server answers returns that job or creates it, never a second one (within 24 hours)."""

    def __init__(self, idempotency_key, last_error):
        self.idempotency_key = idempotency_key
        self.last_error = last_error
        super().__init__(
            None, "client.no_answer", "Idempotency-Key",
            "the server did not answer; the job may exist under idempotency key "
            f"{idempotency_key}. Once it answers, submit(spec, idempotency_key="
            f"'{idempotency_key}') returns that job or creates it (never a second one) within "
            f"24 hours (last failure: {last_error})")


class WaitTimeout(TunePlaneError):
    """wait() or logs(follow=True) passed its timeout; nothing was cancelled. `job` is the
    last job read (a dict), if any."""

    def __init__(self, job_id, timeout, job=None):
        self.job = job
        phase = f" (phase {job.get('phase')})" if job else ""
        super().__init__(None, "client.timeout", "timeout",
                         f"job {job_id} did not end within {timeout:g} s{phase}; it was not "
                         "cancelled")
