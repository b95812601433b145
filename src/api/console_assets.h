// The web console's files (web/), built into the binary: cmake/embed_web.cmake writes
// console_assets.cc into the build directory from whatever web/ holds, with each file's
// content type and ETag. `tuneplane serve` hands them out at / and /ui/<path>
// (console_routes.cc) with the security headers below. Read-only static data: safe from any
// thread.
#pragma once

#include <span>
#include <string_view>

namespace tuneplane::api {

// Sent with every console file. The page runs only its own scripts and styles, talks only to
// this server, cannot be framed, posts no forms and leaks no referrer: a value from a spec, a
// log or Slurm that reached the page as markup could not run or load anything.
inline constexpr std::string_view kConsoleContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

struct ConsoleAsset {
  std::string_view path;          // relative to web/, e.g. "index.html", "js/api.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view etag;          // quoted: the first 128 bits of the file's SHA-256, in hex
  std::string_view body;
};

// Every file, sorted by path.
std::span<const ConsoleAsset> consoleAssets();

// The file at `path` (relative to web/), or nullptr.
const ConsoleAsset* findConsoleAsset(std::string_view path);

}  // namespace tuneplane::api
