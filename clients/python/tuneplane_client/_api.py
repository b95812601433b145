"""What the client uses of the /v1 API, in one place, so a test can hold it against
docs/openapi.json (tests/test_openapi.py): every route by its operationId, method, path and
the query parameters and headers the client sends, and every response member it reads, by
the schema that defines it."""

# operationId -> (method, path template, parameters the client may send)
ROUTES = {
    "listJobs": ("GET", "/v1/jobs", ("phase", "name", "label", "limit", "continue", "owner")),
    "submitJob": ("POST", "/v1/jobs", ("Idempotency-Key",)),
    "uploadWorkdir": ("POST", "/v1/workdirs", ()),
    "getJob": ("GET", "/v1/jobs/{id}", ("id",)),
    "listJobEvents": ("GET", "/v1/jobs/{id}/events", ("id",)),
    "cancelJob": ("POST", "/v1/jobs/{id}/cancel", ("id",)),
    "getJobLogs": ("GET", "/v1/jobs/{id}/logs", ("id", "stream", "attempt", "component")),
    "listJobFiles": ("GET", "/v1/jobs/{id}/files",
                     ("id", "area", "attempt", "path", "limit", "continue")),
    "getJobFileContent": ("GET", "/v1/jobs/{id}/files/content", ("id", "area", "attempt", "path")),
    "validateSpec": ("POST", "/v1/validate", ()),
    "getCapabilities": ("GET", "/v1/capabilities", ()),
    "whoami": ("GET", "/v1/whoami", ()),
}

# schema name in components.schemas -> the members the client reads
FIELDS_READ = {
    "ErrorList": ("errors",),
    "Error": ("code", "field", "message"),
    "Job": ("id", "phase", "terminal", "attempts"),
    "Attempt": ("number", "terminal"),
    "JobList": ("items", "continue"),
    "EventList": ("items",),
    "Logs": ("attempt", "content", "bytes", "missing_reason"),
    "FileList": ("items", "continue"),
    "FileEntry": ("name", "path", "path_encoded", "type"),
    "WorkdirUpload": ("workdir", "sha256"),
}

# Answers that say the submit's outcome is unknown or that the server is briefly away:
# retried under the same Idempotency-Key (docs/users.md, "A submit whose answer is lost").
TRANSIENT_STATUSES = (429, 502, 503, 504)

