// Fuzz target: the runtime registry loader (YAML or JSON). Properties, besides no crash,
// leak, overflow or undefined behaviour: every error is a "registry." error with a message;
// an accepted registry holds what the loader promises: ids unique and found by find(),
// absolute paths (no file to resolve against here), SHA-256 as 64 lower-case hex digits.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "catalog/site_loader.h"
#include "fuzz_errors.h"

namespace {

bool isLowerHex64(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tuneplane;
  const auto registry = catalog::parseRuntimeRegistry(fuzz::asText(data, size));
  if (!registry) {
    FUZZ_CHECK(!registry.error().empty(), "refused without an error");
    fuzz::checkErrors(registry.error(), {"registry."});
    return 0;
  }
  std::set<std::string> ids;
  for (const auto& runtime : registry->runtimes) {
    FUZZ_CHECK(ids.insert(runtime.id).second, "runtime '" + runtime.id + "' listed twice");
    FUZZ_CHECK(registry->find(runtime.id) == &runtime, "find missed '" + runtime.id + "'");
    FUZZ_CHECK(!runtime.path.empty() && runtime.path.front() == '/',
               "accepted a relative path '" + runtime.path + "'");
    FUZZ_CHECK(isLowerHex64(runtime.sha256), "accepted sha256 '" + runtime.sha256 + "'");
  }
  return 0;
}
