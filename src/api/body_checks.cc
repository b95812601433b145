// See body_checks.h.
#include "api/body_checks.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include "common/text_checks.h"

namespace tuneplane::api {
namespace {

std::string mediaType(std::string_view content_type) {
  const auto semicolon = content_type.find(';');
  std::string_view type = content_type.substr(0, semicolon);
  while (!type.empty() && std::isspace(static_cast<unsigned char>(type.back()))) {
    type.remove_suffix(1);
  }
  while (!type.empty() && std::isspace(static_cast<unsigned char>(type.front()))) {
    type.remove_prefix(1);
  }
  std::string lower(type);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

Status tooDeep(const std::string& why) {
  return fail("api.too_deep", "body",
              why + "; no spec nests deeper than " + std::to_string(kMaxNesting) + " levels");
}

}  // namespace

Status checkContentType(std::string_view content_type, BodyKind kind) {
  static constexpr std::array<std::string_view, 5> kSpecTypes = {
      "application/yaml", "application/x-yaml", "text/yaml", "application/json", "text/plain"};
  const std::string type = mediaType(content_type);
  bool accepted = false;
  const char* wanted = "application/yaml or application/json";
  switch (kind) {
    case BodyKind::kSpec:
      accepted = std::find(kSpecTypes.begin(), kSpecTypes.end(), type) != kSpecTypes.end();
      break;
    case BodyKind::kJson:
      accepted = type == "application/json";
      wanted = "application/json";
      break;
    case BodyKind::kTar:
      accepted = type == "application/x-tar";
      wanted = "application/x-tar";
      break;
  }
  if (accepted) return ok();
  return fail("api.unsupported_media_type", "Content-Type",
              "'" + std::string(content_type) + "' is not accepted here; send " + wanted);
}

Status checkBodyText(std::string_view body) {
  if (body.find('\0') != std::string_view::npos) {
    return fail("api.nul_byte", "body", "the body contains a NUL byte");
  }
  if (!isUtf8(body)) return fail("api.invalid_utf8", "body", "the body is not UTF-8");
  int depth = 0;
  char quote = 0;
  bool comment = false;
  bool line_start = true;
  int indent = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '\n') {
      // A quote is closed at the line's end: a stray apostrophe in a plain scalar ("it's")
      // must not hide the brackets of the lines after it. (A quoted scalar spanning lines
      // is only scanned more strictly.)
      comment = false;
      quote = 0;
      line_start = true;
      indent = 0;
      continue;
    }
    if (line_start) {
      // A block indicator at a line's start ("- ", "? ", ": ") opens a level as an indent
      // does: "- - - x" nests three sequences on one line (found by fuzz/api_body_fuzz.cc).
      const char next = i + 1 < body.size() ? body[i + 1] : '\n';
      const bool indicator =
          (c == '-' || c == '?' || c == ':') && (next == ' ' || next == '\t' || next == '\n');
      if (c == ' ' || indicator) {
        if (++indent > kMaxIndent) return tooDeep("a line is indented too deeply");
        continue;
      }
      line_start = false;
    }
    if (comment) continue;
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;  // an escaped character cannot end the string
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    const char before = i == 0 ? ' ' : body[i - 1];
    const bool token_start = before == ' ' || before == '\t' || before == ':' || before == ',' ||
                             before == '[' || before == '{' || before == '-' || before == '\n';
    if ((c == '"' || c == '\'') && token_start) {
      quote = c;
    } else if (c == '#' && (before == ' ' || before == '\t' || before == '\n')) {
      comment = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return tooDeep("brackets nest too deeply");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return ok();
}

}  // namespace tuneplane::api
