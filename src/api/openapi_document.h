// The OpenAPI 3.1 description of the server's routes (docs/openapi.json), built into the
// binary by cmake/embed_openapi.cmake. `tuneplane serve` answers GET /v1/openapi.json with it
// (public: it describes routes, never a job or a user); the tests check it against the
// server's route table and validate every answer they get against it; docs/api.md is
// generated from it. Read-only static data: safe from any thread.
#pragma once

#include <string_view>

namespace tuneplane::api {

// The document's JSON text, byte for byte as docs/openapi.json holds it.
std::string_view openApiDocument();

}  // namespace tuneplane::api
