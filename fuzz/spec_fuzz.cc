// Fuzz target: the job spec parser and validator (YAML and JSON; JSON is read as YAML) — what
// every `POST /v1/jobs`, `tuneplane validate` and `render` runs on a user's text.
// Properties, besides no crash, leak, overflow or undefined behaviour:
//  - the complete parse succeeds exactly when the partial parse found no structural error,
//    and then both read the same spec;
//  - every error has a code of its layer ("spec." or "launch."), and a message;
//  - judgeSpec finding nothing means assembly succeeds (on both sites), as its contract says.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_errors.h"
#include "fuzz_site.h"
#include "fuzz_support.h"
#include "launch/assembler.h"
#include "spec/spec_parser.h"

namespace tuneplane::fuzz {
namespace {

void checkErrors(const Errors& errors) {
  fuzz::checkErrors(errors, {"spec.", "launch."});
}

}  // namespace

int testOneSpec(std::string_view text) {
  const FuzzSite& site = fuzzSite();
  const spec::PartialSpec partial = spec::parsePartialJobSpec(text);
  const Checked<spec::JobSpec> full = spec::parseJobSpec(text);
  FUZZ_CHECK(full.has_value() == partial.complete(), describe(partial.errors));
  if (full) FUZZ_CHECK(*full == partial.spec, "the two parses read different specs");
  checkErrors(partial.errors);

  for (const catalog::SiteConfig* config : {&site.pyxis, &site.apptainer}) {
    const Errors judged = launch::judgeSpec(partial, *config, site.registry);
    checkErrors(judged);
    if (!full || !judged.empty()) continue;
    const launch::AttemptIdentity identity = fixedIdentity(full->metadata.name);
    const auto assembled =
        launch::assembleLaunch(*full, *config, site.registry, identity,
                               attemptDir(*config, identity), checkpointDir(*config, identity));
    FUZZ_CHECK(assembled.has_value(), "judged valid, yet assembly refused it:" +
                                          describe(assembled ? Errors{} : assembled.error()));
  }
  return 0;
}

}  // namespace tuneplane::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tuneplane::fuzz::testOneSpec(tuneplane::fuzz::asText(data, size));
}
