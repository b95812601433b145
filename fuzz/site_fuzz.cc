// Fuzz target: the site file loader (YAML), what `serve`, `validate`, `doctor` and every
// operator command read first. Properties, besides no crash, leak, overflow or undefined
// behaviour: every error is a "site." error with a message; an accepted site holds what the
// loader promises (an absolute staging root, GPU series named once).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "catalog/site_loader.h"
#include "fuzz_errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tuneplane;
  const auto site = catalog::parseSiteConfig(fuzz::asText(data, size));
  if (!site) {
    FUZZ_CHECK(!site.error().empty(), "refused without an error");
    fuzz::checkErrors(site.error(), {"site."});
    return 0;
  }
  FUZZ_CHECK(!site->staging_root.empty() && site->staging_root.front() == '/',
             "accepted a relative staging root '" + site->staging_root + "'");
  std::set<std::string> series;
  for (const auto& gpu : site->gpu_series) {
    FUZZ_CHECK(series.insert(gpu.name).second, "GPU series '" + gpu.name + "' named twice");
    FUZZ_CHECK(site->findGpuSeries(gpu.name) == &gpu, "findGpuSeries missed '" + gpu.name + "'");
  }
  return 0;
}
