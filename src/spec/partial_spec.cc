#include "spec/partial_spec.h"

#include "spec/error_codes.h"

namespace tuneplane::spec {
namespace {

// `outer` is `field` or one of its ancestors in the a.b[0].c path syntax; "" is the root.
bool contains(std::string_view outer, std::string_view field) {
  if (outer.empty()) return true;
  if (!field.starts_with(outer)) return false;
  if (field.size() == outer.size()) return true;
  const char next = field[outer.size()];
  return next == '.' || next == '[';
}

}  // namespace

bool PartialSpec::readable(std::string_view field) const {
  for (const Error& e : errors) {
    if (e.code == codes::kUnknownField) continue;
    // Its field is the file's path, not a spec path: nothing of the spec was read.
    if (e.code == codes::kUnreadableFile) return false;
    // The field says where the limit was crossed, but the document was not read at all.
    if (e.code == codes::kDocumentTooLarge || e.code == codes::kTooManyValues) return false;
    if (contains(e.field, field)) return false;
  }
  return true;
}

}  // namespace tuneplane::spec
