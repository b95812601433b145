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
  attempt::ListPosition from;  // from `continue`: where the previous page stopped
};

enum class FilesRoute { kList, kContent };

// Every bad parameter is one error of a 400: "api.invalid_parameter" naming it, or
// "files.invalid_path" naming the path's rule.
tl::expected<FilesQuery, Refusal> parseFilesQuery(const QueryParams& params, FilesRoute route);

// The `continue` token of the page that starts at `next`, and back: base64url of
// {"v":1,"c":cookie,"d":inode}. Clients treat it as opaque. It is checked completely before
// use (nullopt: not one of ours) and, forged, can do no harm: its cookie only ever reaches
// lseek(2) on the very folder the request names, and only when `d` is that folder's inode
// (listOutputDirectory) — anything it could reach is what the caller may list anyway.
std::string filesContinueToken(const attempt::ListPosition& next);
std::optional<attempt::ListPosition> parseFilesContinueToken(std::string_view token);

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
// exactly the file's strong `etag`. An HTTP date never holds (the whole file is sent): the
// Last-Modified date is weak, since a file can change twice within its second.
bool ifRangeHolds(std::string_view if_range, std::string_view etag);

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 §5.6.7) of a Unix time in milliseconds.
std::string httpDate(int64_t unix_ms);

// A listed entry's path as a `path` query value that names it byte for byte (RFC 3986):
// every byte but A-Z a-z 0-9 - . _ ~ and '/' percent-encoded. JSON holds only UTF-8, so a
// name with other bytes is shown with U+FFFD in `path`, which names no file; this form does.
std::string percentEncodePath(std::string_view path);

// `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266): an ASCII fallback with every
// byte outside printable ASCII, '"' and '\' replaced by '_', and the name percent-encoded.
std::string contentDisposition(std::string_view name);

}  // namespace tuneplane::api
