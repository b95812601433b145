// Checks on a request body before any parser sees it, so a hostile body gets a clear 4xx
// instead of deep recursion in a parser: the content type, valid UTF-8 without NUL bytes,
// and a bounded nesting depth (flow brackets outside quotes and comments, and block
// indentation, where a line's leading "- ", "? " and ": " count as indentation). The size limit is
// the transport's (413 before the body is read in full). YAML aliases need no check here: the spec
// reader walks a fixed schema, so an alias bomb is never expanded. Pure functions.
#pragma once

#include <string_view>

#include "common/result.h"

namespace tuneplane::api {

// Deeper than any spec needs (a spec nests about 6 levels).
inline constexpr int kMaxNesting = 32;
inline constexpr int kMaxIndent = 2 * kMaxNesting * 4;  // columns of leading spaces

enum class BodyKind {
  kSpec,  // YAML or JSON: application/yaml, application/x-yaml, text/yaml,
          // application/json, text/plain (parameters such as charset ignored)
  kJson,  // application/json only
  kTar,   // application/x-tar only (POST /v1/workdirs)
};

// Errors: "api.unsupported_media_type" (field "Content-Type").
Status checkContentType(std::string_view content_type, BodyKind kind);

// Errors: "api.invalid_utf8", "api.nul_byte", "api.too_deep" (field "body").
Status checkBodyText(std::string_view body);

}  // namespace tuneplane::api
