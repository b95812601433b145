// Errors as values. One Error type for the whole project: a stable machine-readable code,
// the field it concerns (a dotted path such as "spec.resources.pools[1].nodes", or empty),
// and a human message. Result<T> wraps tl::expected and uses only what std::expected
// (C++23) also has, so switching later is one edit here.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

namespace tuneplane {

struct Error {
  std::string code;     // stable, e.g. "spec.unknown_key"; scripts and tests match on it
  std::string field;    // where the problem is; empty when it concerns no single field
  std::string message;  // for people; never contains a credential

  // "field: message [code]" — the one-line form the CLI prints.
  std::string describe() const {
    std::string out;
    if (!field.empty()) out += field + ": ";
    out += message;
    out += " [" + code + "]";
    return out;
  }
  bool operator==(const Error&) const = default;
};

using Errors = std::vector<Error>;

template <typename T>
using Result = tl::expected<T, Error>;
using Status = Result<void>;

// Result of a check that reports every problem, not just the first.
template <typename T>
using Checked = tl::expected<T, Errors>;

inline tl::unexpected<Error> fail(std::string code, std::string field, std::string message) {
  return tl::unexpected<Error>(Error{std::move(code), std::move(field), std::move(message)});
}
inline tl::unexpected<Error> fail(Error error) {
  return tl::unexpected<Error>(std::move(error));
}
inline tl::unexpected<Errors> failAll(Errors errors) {
  return tl::unexpected<Errors>(std::move(errors));
}
inline Status ok() {
  return {};
}

}  // namespace tuneplane
