// The HTTP client of TunePlane's /v1 API (docs/api.md, from docs/openapi.json): one method per
// route the CLI uses, each returning the server's JSON object verbatim (key order kept, so
// `-o json` prints what the server sent) or an ApiError with the server's errors[].
//
// It rides on http::HttpTransport (libcurl: http, https, unix sockets; keep-alive), and
// sends the bearer token only in the Authorization header. The token is never logged and is
// removed from every error message, including text the server sent back.
// Thread-safety: calls are serialised by the transport; one client may be shared.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/api_error.h"
#include "client/client_config.h"
#include "http/transport.h"

namespace tuneplane::client {

using Json = nlohmann::ordered_json;

// GET /v1/jobs filters; unset members are not sent.
struct ListQuery {
  std::optional<std::string> phase;
  std::optional<std::string> name;
  std::optional<std::string> owner;  // admins only
  std::vector<std::string> labels;   // each "key=value", sent as label=key=value
  std::optional<int> limit;
  std::optional<std::string> continue_token;
};

// GET /v1/jobs/{id}/logs; unset: the server's defaults (last attempt, first component).
struct LogsQuery {
  std::optional<int> attempt;
  std::optional<std::string> component;
  bool stderr_stream = false;  // stream=stderr instead of stdout
};

// Where a job's file is: an area — an attempt's output/ or the job's checkpoints/ — and a
// path in it ("" is the area's root). The server's defaults where unset.
struct FileLocation {
  std::string area = "output";  // "output" or "checkpoints"
  std::optional<int> attempt;   // output only; unset: the latest attempt
  std::string path;
};

// One page of GET /v1/jobs/{id}/files.
struct FilesPage {
  std::optional<int> limit;
  std::string continue_token;  // "" for the first page
};

// What a download's answer says before its first byte.
struct DownloadHead {
  int status = 200;     // 200: the whole file; 206: from `offset`
  uint64_t offset = 0;  // where the body starts in the file
  uint64_t total = 0;   // the file's size
  std::string etag;     // the file's version, for If-Range on a resume
};
// Each piece of the body as it arrives; false stops the download.
using DownloadSink = std::function<bool(const DownloadHead& head, std::string_view chunk)>;

// GET /v1/usage; unset members are not sent (the server's defaults).
struct UsageQuery {
  std::optional<std::string> by;     // user, team, owner, job
  std::optional<std::string> since;  // a date, an RFC 3339 time or Unix seconds
  std::optional<std::string> until;
  std::vector<std::string> users = {};  // repeated user=
};

struct ClientTimeouts {
  std::chrono::milliseconds connect{5000};
  std::chrono::milliseconds request{30000};
};

class ApiClient {
 public:
  // `token` nullopt: no Authorization header (the server answers 401).
  ApiClient(std::unique_ptr<http::HttpTransport> transport, std::optional<std::string> token);

  // A client over libcurl for `config.server`. Errors: "cli.invalid_server".
  static Result<std::unique_ptr<ApiClient>> connect(const ClientConfig& config,
                                                    ClientTimeouts timeouts = {});

  // POST /v1/jobs: the spec as written; JSON when it starts with '{', else YAML. → 201 job;
  // with an `idempotency_key` (sent as Idempotency-Key; common/idempotency_key.h), 200 and
  // the key's first job when the server had created it already.
  ApiResult<Json> submitJob(std::string_view spec_text, const std::string& idempotency_key = {});
  // POST /v1/workdirs: a code folder as a ustar archive (common/workdir_tree.h) → 201 (stored
  // now) or 200 (stored before) {"workdir": "sha256:…", "sha256", "files", "folders", "bytes"}.
  // Idempotent: the same folder is the same upload.
  ApiResult<Json> uploadWorkdir(std::string archive);
  // POST /v1/validate: the spec judged as POST /v1/jobs would judge it, nothing stored →
  // 200 {"valid": true, …summary}, or 422 with every error.
  ApiResult<Json> validateSpec(std::string_view spec_text);
  // GET /v1/capabilities → what the site offers (runtimes, GPU series, partitions, limits).
  ApiResult<Json> capabilities();
  // GET /v1/jobs → {"items": [...], "continue": "..."}.
  ApiResult<Json> listJobs(const ListQuery& query);
  ApiResult<Json> getJob(std::string_view id);
  // GET /v1/jobs/{id}/events → {"items": [...]}.
  ApiResult<Json> jobEvents(std::string_view id);
  ApiResult<Json> jobLogs(std::string_view id, const LogsQuery& query);
  // POST /v1/jobs/{id}/cancel → 202 job.
  ApiResult<Json> cancelJob(std::string_view id);
  // POST /v1/jobs/{id}/attempts/{n}/abandon {"reason"} → 202 job (admins).
  ApiResult<Json> abandonAttempt(std::string_view id, int attempt, std::string_view reason);
  // GET /v1/whoami → {"user": "alice", "admin": false}.
  ApiResult<Json> whoami();
  // GET /v1/usage → {"since", "until", "by", "scope", "items", "total"}.
  ApiResult<Json> usage(const UsageQuery& query);
  // GET /v1/jobs/{id}/files → {"area", "attempt", "path", "items", "continue", "areas"}:
  // one page of a directory of the job's outputs (each item's path_encoded names it exactly).
  ApiResult<Json> listFiles(std::string_view id, const FileLocation& where,
                            const FilesPage& page = {});
  // GET /v1/jobs/{id}/files/content: the file's bytes to `sink` as they arrive, never held
  // whole. With `offset` > 0, asks for the rest from there (Range), only while the file is
  // still the version `if_range` names (If-Range): a changed file comes whole (status 200),
  // and the sink, told by the head, starts over. A download stalls out after the request
  // timeout without a byte; it has no limit on its length.
  ApiResult<DownloadHead> downloadFile(std::string_view id, const FileLocation& where,
                                       uint64_t offset, const std::string& if_range,
                                       const DownloadSink& sink);

 private:
  // One request: the token and User-Agent added; a 2xx answer, or the ApiError of a
  // transport failure or of a 4xx/5xx (the server's errors[]).
  ApiResult<http::HttpResponse> exchange(http::HttpRequest request,
                                         const http::HttpDownload* download = nullptr);
  ApiResult<Json> call(std::string method, std::string target, std::string body = "",
                       std::string content_type = "",
                       std::vector<std::pair<std::string, std::string>> headers = {});
  std::string redact(std::string text) const;

  std::unique_ptr<http::HttpTransport> transport_;
  std::optional<std::string> token_;
};

// Percent-encodes one path segment or query value (RFC 3986 unreserved characters kept).
std::string escapeUriComponent(std::string_view text);

// "application/json" when the first non-blank character is '{', else "application/yaml".
std::string specContentType(std::string_view spec_text);

}  // namespace tuneplane::client
