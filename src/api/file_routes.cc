// The /v1/jobs/{id}/files routes of ApiServer (api_server.h): a job's outputs — each
// attempt's output/ and the job's checkpoints/ — listed a page at a time and downloaded with
// Range support, the job's owner or an admin only (job_lookup.h). The files are read by
// attempt/output_files.h, which never follows a link or leaves the area; a page reads only
// what it returns, and at most listingCapacity(server.threads) listings run at once
// (listing_gate.h); a download is streamed a chunk at a time (body_stream.h), so memory does
// not grow with the file.
#include <fmt/format.h>

#include "api/api_server.h"
#include "api/error_codes.h"
#include "api/file_queries.h"
#include "api/job_lookup.h"
#include "api/json_views.h"
#include "api/listing_gate.h"
#include "attempt/error_codes.h"

namespace tuneplane::api {
namespace {

using nlohmann::json;

// The rest of one open file, from `offset`, `remaining` bytes: a download's body.
class FileBodyStream final : public BodyStream {
 public:
  FileBodyStream(attempt::OutputFile file, uint64_t offset, uint64_t remaining)
      : file_(std::move(file)), offset_(offset), remaining_(remaining) {}

  // BodyStream
  Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    const std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(capacity, remaining_));
    auto n = file_.readAt(offset_, buffer, want);
    if (!n) return tl::unexpected(n.error());
    offset_ += *n;
    remaining_ -= *n;
    return *n;
  }

 private:
  attempt::OutputFile file_;
  uint64_t offset_;
  uint64_t remaining_;
};

Error noSuchAttempt() {
  return {"api.not_found", "attempt", "no such attempt"};
}

class FileRoutes {
 public:
  FileRoutes(const ApiDependencies& deps, int listing_capacity)
      : deps_(deps), listings_(listing_capacity) {}

  // GET /v1/jobs/{id}/files: one page of a directory of an area, and the job's areas.
  void list(const HttpRequest& req, HttpResponse& res, const Principal& who) {
    auto view = visibleJob(deps_.jobs, req.path_params[0], who, res);
    if (!view) return;
    auto query = parseFilesQuery(req.params, FilesRoute::kList);
    if (!query) return sendErrors(res, query.error().status, query.error().errors);
    // Before any filesystem work: a listing over the gate's capacity would hold a worker.
    auto slot = listings_.tryEnter();
    if (!slot) {
      res.setHeader("Retry-After", "1");
      return sendError(res, 503,
                       {codes::kFilesBusy, "",
                        fmt::format("{} listings of job outputs are under way, as many as run at "
                                    "once (half of server.threads); try again",
                                    listings_.capacity())});
    }
    auto located = locate(*view, *query, res);
    if (!located) return;
    auto page = deps_.list_files(located->area, query->path, query->from, query->limit);
    if (!page && page.error().code == attempt::codes::kFilesBadPosition) {
      return sendError(res, 400,
                       {"api.invalid_parameter", "continue",
                        page.error().message + "; start again without continue"});
    }
    if (!page) return sendError(res, statusFor(page.error().code), page.error());
    std::string prefix;
    for (const std::string& part : query->path) prefix += part + "/";
    json items = json::array();
    for (const attempt::FileEntry& e : page->entries) {
      items.push_back({{"name", e.name},
                       {"path", prefix + e.name},
                       {"path_encoded", percentEncodePath(prefix + e.name)},
                       {"type", attempt::toString(e.type)},
                       {"size", e.size},
                       {"modified", timeJson(e.modified_ms)}});
    }
    json areas = json::array();
    for (const store::AttemptRecord& a : view->attempts) {
      auto output = attempt::areaOf(a.staging_dir, view->job.id, attempt::OutputArea::kOutput,
                                    view->job.run_as);
      areas.push_back({{"area", "output"},
                       {"attempt", a.number},
                       {"exists", output && attempt::outputAreaExists(*output)}});
    }
    if (!view->attempts.empty()) {
      auto checkpoints = attempt::areaOf(view->attempts.back().staging_dir, view->job.id,
                                         attempt::OutputArea::kCheckpoints, view->job.run_as);
      areas.push_back({{"area", "checkpoints"},
                       {"attempt", nullptr},
                       {"exists", checkpoints && attempt::outputAreaExists(*checkpoints)}});
    }
    sendJson(res, 200,
             {{"area", attempt::toString(query->area)},
              {"attempt", located->attempt ? json(*located->attempt) : json(nullptr)},
              {"path", prefix.empty() ? prefix : prefix.substr(0, prefix.size() - 1)},
              {"items", std::move(items)},
              {"continue", page->next ? filesContinueToken(*page->next) : std::string()},
              {"areas", std::move(areas)}});
  }

  // GET /v1/jobs/{id}/files/content: one file, whole (200) or one byte range (206).
  void content(const HttpRequest& req, HttpResponse& res, const Principal& who) const {
    auto view = visibleJob(deps_.jobs, req.path_params[0], who, res);
    if (!view) return;
    auto query = parseFilesQuery(req.params, FilesRoute::kContent);
    if (!query) return sendErrors(res, query.error().status, query.error().errors);
    auto located = locate(*view, *query, res);
    if (!located) return;
    auto file = attempt::openOutputFile(located->area, query->path);
    if (!file) return sendError(res, statusFor(file.error().code), file.error());
    const uint64_t size = file->size;
    const std::string last_modified = httpDate(file->modified_ms);
    res.setHeader("ETag", file->etag);
    res.setHeader("Last-Modified", last_modified);
    res.setHeader("Accept-Ranges", "bytes");
    ByteRange range;
    if (ifRangeHolds(req.header("If-Range"), file->etag)) {
      range = parseByteRange(req.header("Range"), size);
    }
    if (range.kind == RangeKind::kUnsatisfiable) {
      res.setHeader("Content-Range", fmt::format("bytes */{}", size));
      return sendError(res, 416,
                       {"files.range_not_satisfiable", "Range",
                        fmt::format("the range starts at or beyond the end of the file ({} "
                                    "bytes)",
                                    size)});
    }
    // A download is never rendered: saved as a file, its type never guessed.
    res.setHeader("Content-Type", "application/octet-stream");
    res.setHeader("Content-Disposition", contentDisposition(file->name));
    res.setHeader("Content-Security-Policy", "default-src 'none'; sandbox");
    uint64_t first = 0;
    uint64_t length = size;
    int status = 200;
    if (range.kind == RangeKind::kPartial) {
      first = range.first;
      length = range.last - range.first + 1;
      status = 206;
      res.setHeader("Content-Range", fmt::format("bytes {}-{}/{}", range.first, range.last, size));
    }
    sendStream(res, status, length,
               std::make_shared<FileBodyStream>(std::move(*file), first, length));
  }

 private:
  struct Located {
    attempt::AreaLocation area;
    std::optional<int> attempt;  // the output's attempt; nullopt for checkpoints
  };

  // Where the query's area is, or the 404 that says why there is none.
  std::optional<Located> locate(const store::JobView& view, const FilesQuery& query,
                                HttpResponse& res) const {
    if (view.attempts.empty()) {
      sendError(res, 404, {"api.not_found", "attempt", "the job has no attempt yet, so no files"});
      return std::nullopt;
    }
    const store::AttemptRecord* attempt = &view.attempts.back();
    if (query.attempt) {
      const auto found =
          std::find_if(view.attempts.begin(), view.attempts.end(),
                       [&](const store::AttemptRecord& a) { return a.number == *query.attempt; });
      if (found == view.attempts.end()) {
        sendError(res, 404, noSuchAttempt());
        return std::nullopt;
      }
      attempt = &*found;
    }
    auto area = attempt::areaOf(attempt->staging_dir, view.job.id, query.area, view.job.run_as);
    if (!area) {
      sendError(res, 500, area.error());
      return std::nullopt;
    }
    return Located{std::move(*area), query.area == attempt::OutputArea::kOutput
                                         ? std::optional<int>(attempt->number)
                                         : std::nullopt};
  }

  const ApiDependencies& deps_;
  ListingGate listings_;
};

}  // namespace

void ApiServer::installFileRoutes() {
  auto routes = std::make_shared<FileRoutes>(deps_, listingCapacity(options_.threads));
  get("/v1/jobs/{id}/files", Access::kUser,
      [routes](const HttpRequest& req, HttpResponse& res, const Principal& who) {
        routes->list(req, res, who);
      });
  get("/v1/jobs/{id}/files/content", Access::kUser,
      [routes](const HttpRequest& req, HttpResponse& res, const Principal& who) {
        routes->content(req, res, who);
      });
}

}  // namespace tuneplane::api
