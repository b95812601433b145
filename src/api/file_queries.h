// The requests of the /v1/jobs/{id}/files routes, parsed as pure functions: which area
// (an attempt's output/ or the job's checkpoints/), which attempt, which path, which page;
// and the HTTP parts of a download — a single byte Range (RFC 9110 §14) checked against
// If-Range, and the headers that name the file. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "api/job_queries.h"
#include "attempt/output_files.h"

namespace tuneplane::api {

// GET /v1/jobs/{id}/files (a listing) and /v1/jobs/{id}/files/content (a download):
//   area     output (default) | checkpoints
//   attempt  1..1000000, output only (default: the latest attempt)
//   path     relative to the area (attempt/output_files.h's rules); required for content
//   limit    1..1000 entries (default 200), listing only
//   continue the previous page's token, listing only
struct FilesQuery {
  attempt::OutputArea area = attempt::OutputArea::kOutput;
  std::optional<int> attempt;     // absent: the latest
  std::vector<std::string> path;  // checked components; empty: the area's root
  std::size_t limit = attempt::kDefaultListLimit;
  std::string after;  // from `continue`: the last name of the previous page
};

enum class FilesRoute { kList, kContent };

// Every bad parameter is one error of a 400: "api.invalid_parameter" naming it, or
// "files.invalid_path" naming the path's rule.
tl::expected<FilesQuery, Refusal> parseFilesQuery(const QueryParams& params, FilesRoute route);

// The token of the page after the one that ended with `last_name`, and back.
std::string filesContinueToken(std::string_view last_name);
std::optional<std::string> parseFilesContinueToken(std::string_view token);

// A Range header against a body of `size` bytes. One "bytes=" range is honoured (kPartial,
// first..last inclusive, clamped to the body) or refused (kUnsatisfiable: it starts at or
// beyond the end, or is a zero-length suffix); no header, another unit, a malformed one or
// several ranges get the whole body, as RFC 9110 lets a server do.
enum class RangeKind { kWhole, kPartial, kUnsatisfiable };
struct ByteRange {
  RangeKind kind = RangeKind::kWhole;
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
  bool operator==(const ByteRange&) const = default;
};
ByteRange parseByteRange(std::string_view header, uint64_t size);

// Whether a Range may be honoured under `if_range` (RFC 9110 §13.1.5): absent, or naming
// exactly the file's strong `etag` or its `last_modified` HTTP date.
bool ifRangeHolds(std::string_view if_range, std::string_view etag, std::string_view last_modified);

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 §5.6.7) of a Unix time in milliseconds.
std::string httpDate(int64_t unix_ms);

// `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266): an ASCII fallback with every
// byte outside printable ASCII, '"' and '\' replaced by '_', and the name percent-encoded.
std::string contentDisposition(std::string_view name);

}  // namespace tuneplane::api
