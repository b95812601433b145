// Fuzz target: the API's request body checks (api/body_checks.h), what every POST with a
// body passes before any parser sees it, and the parsers behind them: the spec reader
// (`POST /v1/jobs`, `/v1/validate`) and nlohmann's JSON (`…/attempts/{n}/abandon`). An
// input is the Content-Type header's value, a newline, then the body. Properties, besides
// no crash, leak, overflow or undefined behaviour:
//  - refusals carry their documented codes and fields; a JSON-only type is a spec type too;
//  - an accepted body is UTF-8 without NUL bytes;
//  - an accepted body nests no deeper than the check promises (kMaxNesting flow levels
//    plus the block levels kMaxIndent columns hold), as YAML and as JSON: the check exists
//    so a parser never recurses deeply on a hostile body.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "api/body_checks.h"
#include "common/text_checks.h"
#include "fuzz_support.h"
#include "spec/document_measure.h"
#include "spec/spec_parser.h"

namespace tuneplane::fuzz {
namespace {

// The deepest a body that passes checkBodyText can nest: every flow level is a bracket the
// check counts, every block level at least one more column of indentation.
constexpr int kDeepestAccepted = api::kMaxNesting + api::kMaxIndent + 1;

int yamlDepth(const YAML::Node& node, int depth) {
  if (depth > kDeepestAccepted) return depth;  // enough to fail; no need to go on
  int deepest = depth;
  if (node.IsSequence()) {
    for (const auto& child : node) deepest = std::max(deepest, yamlDepth(child, depth + 1));
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      deepest = std::max(deepest, yamlDepth(entry.first, depth + 1));
      deepest = std::max(deepest, yamlDepth(entry.second, depth + 1));
    }
  }
  return deepest;
}

int jsonDepth(const nlohmann::json& value, int depth) {
  if (depth > kDeepestAccepted) return depth;
  int deepest = depth;
  if (value.is_structured()) {
    for (const auto& child : value) deepest = std::max(deepest, jsonDepth(child, depth + 1));
  }
  return deepest;
}

void checkContentType(std::string_view type) {
  const Status spec = api::checkContentType(type, api::BodyKind::kSpec);
  const Status json = api::checkContentType(type, api::BodyKind::kJson);
  for (const Status* status : {&spec, &json}) {
    if (*status) continue;
    FUZZ_CHECK(status->error().code == "api.unsupported_media_type" &&
                   status->error().field == "Content-Type" && !status->error().message.empty(),
               status->error().describe());
  }
  FUZZ_CHECK(!json || spec, "a JSON-only type that is not a spec type");
}

}  // namespace

int testOneBody(std::string_view input) {
  const std::size_t newline = input.find('\n');
  const std::string_view type = newline == std::string_view::npos ? "" : input.substr(0, newline);
  const std::string_view body =
      newline == std::string_view::npos ? input : input.substr(newline + 1);
  checkContentType(type);

  const Status checked = api::checkBodyText(body);
  if (!checked) {
    const Error& error = checked.error();
    FUZZ_CHECK((error.code == "api.invalid_utf8" || error.code == "api.nul_byte" ||
                error.code == "api.too_deep") &&
                   error.field == "body" && !error.message.empty(),
               error.describe());
    return 0;
  }
  FUZZ_CHECK(isUtf8(body) && body.find('\0') == std::string_view::npos,
             "accepted a body that is not UTF-8 or holds a NUL byte");

  // What the routes do with it.
  (void)spec::parsePartialJobSpec(body);
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) {
    const int depth = jsonDepth(json, 0);
    FUZZ_CHECK(depth <= kDeepestAccepted, "accepted JSON nesting " + std::to_string(depth));
  }
  // The YAML tree's depth, where its aliases cannot make walking it explode (the spec
  // reader's own document limits).
  if (!spec::measureDocument(body, spec::kSpecDocumentLimits)) {
    try {
      const int depth = yamlDepth(YAML::Load(std::string(body)), 0);
      FUZZ_CHECK(depth <= kDeepestAccepted, "accepted YAML nesting " + std::to_string(depth));
    } catch (const YAML::Exception&) {
      // Not YAML: the spec reader refused it above.
    }
  }
  return 0;
}

}  // namespace tuneplane::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tuneplane::fuzz::testOneBody(tuneplane::fuzz::asText(data, size));
}
