#include "spec/partial_spec.h"

#include <algorithm>
#include <functional>

#include "spec/error_codes.h"

namespace tuneplane::spec {
bool PartialSpec::readable(std::string_view field) const {
  return ReadableFields(*this).readable(field);
}

ReadableFields::ReadableFields(const PartialSpec& partial) {
  for (const Error& e : partial.errors) {
    if (e.code == codes::kUnknownField) continue;
    // Its field is the file's path, not a spec path: nothing of the spec was read.
    // The limits' errors say where the limit was crossed, but the document was not read at
    // all.
    // An error on the root ("") makes everything unreadable too.
    if (e.code == codes::kUnreadableFile || e.code == codes::kDocumentTooLarge ||
        e.code == codes::kTooManyValues || e.field.empty()) {
      nothing_readable_ = true;
      return;
    }
    unreadable_.push_back(e.field);
  }
  std::sort(unreadable_.begin(), unreadable_.end());
}

bool ReadableFields::readable(std::string_view field) const {
  if (nothing_readable_) return false;
  const auto unreadable = [this](std::string_view path) {
    return std::binary_search(unreadable_.begin(), unreadable_.end(), path, std::less<>());
  };
  // An error's field makes unreadable itself and every field inside it: those it is a prefix
  // of, ending where a key (.) or an index ([) begins.
  for (std::size_t end = 0; end < field.size(); ++end) {
    if ((field[end] == '.' || field[end] == '[') && unreadable(field.substr(0, end))) return false;
  }
  return !unreadable(field);
}

}  // namespace tuneplane::spec
