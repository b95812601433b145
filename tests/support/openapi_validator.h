// Checks HTTP answers against the OpenAPI document of /v1 (docs/openapi.json): the route
// tests and the end-to-end tests hand every answer they receive to it, so the document cannot
// drift from what the server sends. Debian 12 packages no C++ JSON Schema validator, so this
// validates the subset of JSON Schema (2020-12) the document uses — $ref to
// #/components/..., type (one or a list), enum, properties, required,
// additionalProperties, items, anyOf, minimum, maximum; description and format are notes — and
// documentProblems() refuses any other keyword, so the document cannot use one this
// validator would silently ignore. Immutable after construction: safe from any thread.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tuneplane::test {

class OpenApiValidator {
 public:
  explicit OpenApiValidator(nlohmann::json document);

  // The repository's docs/openapi.json, read once (a failed read fails every check).
  static const OpenApiValidator& repository();

  // Keywords outside the subset above, and $refs that resolve to nothing, anywhere in the
  // document's schemas; empty when it is all checkable.
  std::vector<std::string> documentProblems() const;

  // "" when `value` matches `schema`; otherwise what does not, with its JSON path.
  std::string validate(const nlohmann::json& value, const nlohmann::json& schema) const;

  // "" when the document describes this answer to METHOD TARGET (a path with or without its
  // query): the route, the method, the status, the media type and, for JSON, the body's shape.
  // An answer to no documented operation may only be one of the router's or the transport's
  // errors (404, 405, 400, 413, 431, 503) in the error shape.
  std::string checkAnswer(std::string_view method, std::string_view target, int status,
                          std::string_view content_type, const std::string& body) const;

  // "" when STATUS is an answer the document allows to METHOD TARGET: checkAnswer without the
  // body, for records that keep only the status (serve's access log).
  std::string checkStatus(std::string_view method, std::string_view target, int status) const;

  // The path template of the document that TARGET matches ("" for none), e.g.
  // "/v1/jobs/{id}" for "/v1/jobs/abc?x=1".
  std::string matchPath(std::string_view target) const;

  // Every operation, as "METHOD /template" (e.g. "GET /v1/jobs/{id}"), sorted.
  std::vector<std::string> operations() const;

  const nlohmann::json& document() const { return document_; }

 private:
  const nlohmann::json& resolve(const nlohmann::json& node) const;
  // The response object the document has for this answer; nullptr and `problem` when none.
  const nlohmann::json* responseFor(std::string_view method, std::string_view target, int status,
                                    std::string& problem) const;
  std::string validateAt(const nlohmann::json& value, const nlohmann::json& schema,
                         const std::string& where, int depth) const;

  nlohmann::json document_;
};

// Hands every answer `client` receives to OpenApiValidator::repository(); an answer the
// document does not describe is a test failure (ADD_FAILURE) naming what differs.
void validateAnswersOf(httplib::Client& client);

}  // namespace tuneplane::test
