// The web console's routes of ApiServer (api_server.h): GET / (the jobs page) and
// GET /ui/<path> (every file of web/, embedded by cmake/embed_web.cmake). Public: the files
// hold no data; the page fetches everything from /v1 with the user's bearer token. Each
// answer carries the strict Content-Security-Policy, nosniff and no-referrer, and an ETag:
// the browser revalidates every time (no-cache) and gets 304 while the binary is the same.
#include <algorithm>

#include "api/api_server.h"
#include "api/console_assets.h"

namespace tuneplane::api {
namespace {

// Whether an If-None-Match header ("*", or a list of tags, weak or strong) names `etag`.
bool matchesEtag(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    const auto comma = header.find(',');
    std::string_view tag = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
  }
  return false;
}

void sendAsset(const ConsoleAsset& asset, const HttpRequest& req, HttpResponse& res) {
  res.setHeader("Content-Security-Policy", std::string(kConsoleContentSecurityPolicy));
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("ETag", std::string(asset.etag));
  if (matchesEtag(req.header("If-None-Match"), asset.etag)) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.setBody(std::string(asset.body), asset.content_type);
}

}  // namespace

const ConsoleAsset* findConsoleAsset(std::string_view path) {
  const auto assets = consoleAssets();
  const auto it = std::lower_bound(
      assets.begin(), assets.end(), path,
      [](const ConsoleAsset& asset, std::string_view p) { return asset.path < p; });
  return it != assets.end() && it->path == path ? &*it : nullptr;
}

void ApiServer::installConsoleRoutes() {
  auto serve = [](std::string_view path, const HttpRequest& req, HttpResponse& res) {
    // Only names in the embedded table exist: "..", "//" or an encoded path matches nothing.
    const ConsoleAsset* asset = findConsoleAsset(path);
    if (asset == nullptr) return sendError(res, 404, {"api.not_found", "path", "no such page"});
    sendAsset(*asset, req, res);
  };
  get("/", Access::kPublic, [serve](const HttpRequest& req, HttpResponse& res, const Principal&) {
    serve("index.html", req, res);
  });
  get("/ui/", Access::kPublic,
      [serve](const HttpRequest& req, HttpResponse& res, const Principal&) {
        serve("index.html", req, res);
      });
  get("/ui/{path}", Access::kPublic,
      [serve](const HttpRequest& req, HttpResponse& res, const Principal&) {
        serve(req.path_params[0], req, res);
      });
}

}  // namespace tuneplane::api
