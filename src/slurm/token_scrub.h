// Never let a credential through: the token a request carried, removed from what an upstream
// answer or a transport failure says before it becomes a SlurmError's text (and so a log line
// or a user's message). Shared by the request (rest_call.cc) and the operations that build
// errors of their own (rest_operations.cc). Pure.
#pragma once

#include <string>
#include <utility>

#include "slurm/rest_error.h"

namespace tuneplane::slurm::detail {

inline std::string scrub(std::string text, const std::string& token) {
  if (token.empty()) return text;
  for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at)) {
    text.replace(at, token.size(), "<redacted>");
  }
  return text;
}

inline void scrubError(SlurmError& e, const std::string& token) {
  e.error.message = scrub(std::move(e.error.message), token);
  e.error.field = scrub(std::move(e.error.field), token);
  e.slurm_error = scrub(std::move(e.slurm_error), token);
  e.slurm_description = scrub(std::move(e.slurm_description), token);
}

}  // namespace tuneplane::slurm::detail
