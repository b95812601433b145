// Fuzz target: the batch script renderer (slurm/script_renderer.h) on every spec that
// validates. An input is a job spec (YAML or JSON); one that parses and passes every rule on
// a site (a Pyxis one and an Apptainer one, fuzz_site.h) is assembled into a LaunchRequest
// and rendered. Properties, besides no crash, leak, overflow or undefined behaviour:
//  - checkRenderable accepts what assembly produced from a valid spec;
//  - the script lexes cleanly as bash (shell_words.h: no quote or expansion left open), and
//    under the replay tests (or TUNEPLANE_FUZZ_DEEP=1) `bash -n` accepts it;
//  - no user string escapes its quoting: the request is rendered again with every argv
//    entry and environment value wrapped in numbered marker strings, and wherever a marker
//    appears in the script, the text between it and its closing marker is the user's string
//    exactly, literal (quoted), inside one word; and each string appears at least once.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_errors.h"
#include "fuzz_site.h"
#include "launch/assembler.h"
#include "shell_words.h"
#include "slurm/script_checks.h"
#include "slurm/script_renderer.h"
#include "spec/spec_parser.h"

namespace tuneplane::fuzz {
namespace {

constexpr std::string_view kMarkerStem = "@TPM";

std::string openMarker(std::size_t k) {
  return std::string(kMarkerStem) + "O" + std::to_string(k) + "@";
}
std::string closeMarker(std::size_t k) {
  return std::string(kMarkerStem) + "C" + std::to_string(k) + "@";
}

std::size_t occurrences(std::string_view text, std::string_view what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos;
       at = text.find(what, at + what.size())) {
    ++count;
  }
  return count;
}

// Every user string of `request` that the script holds, wrapped in its markers; nullopt when
// the spec's own strings already hold the marker stem (they would confuse the check; checkSite
// skips a script that holds it anywhere).
std::optional<std::vector<std::string>> markStrings(launch::LaunchRequest& request) {
  std::vector<std::string*> strings;
  for (auto& arg : request.command) strings.push_back(&arg);
  for (auto& [name, value] : request.environment) strings.push_back(&value);
  std::vector<std::string> originals;
  for (std::size_t k = 0; k < strings.size(); ++k) {
    if (strings[k]->find(kMarkerStem) != std::string::npos) return std::nullopt;
    originals.push_back(*strings[k]);
    *strings[k] = openMarker(k) + *strings[k] + closeMarker(k);
  }
  return originals;
}

void checkMarked(const std::string& script, const std::vector<std::string>& originals,
                 const char* site) {
  const ShellLex lex = lexShell(script);
  FUZZ_CHECK(lex.error.empty(), std::string(site) + ": the marked script: " + lex.error);
  for (std::size_t k = 0; k < originals.size(); ++k) {
    const std::string open = openMarker(k);
    const std::string close = closeMarker(k);
    const std::string what =
        std::string(site) + ": user string " + std::to_string(k) + " '" + originals[k] + "'";
    std::size_t found = 0;
    for (const ShellWord& word : lex.words) {
      for (std::size_t at = word.text.find(open); at != std::string::npos;
           at = word.text.find(open, at + 1)) {
        const std::size_t begin = at + open.size();
        const std::size_t end = word.text.find(close, begin);
        FUZZ_CHECK(end != std::string::npos, what + " does not end in the word it starts in");
        FUZZ_CHECK(word.text.compare(begin, end - begin, originals[k]) == 0,
                   what + " reads as '" + word.text.substr(begin, end - begin) + "'");
        for (std::size_t i = at; i < end + close.size(); ++i) {
          FUZZ_CHECK(word.literal[i],
                     what + " is not quoted at its byte " + std::to_string(i - at));
        }
        ++found;
      }
    }
    FUZZ_CHECK(found >= 1, what + " is not in the script");
    FUZZ_CHECK(found == occurrences(script, open),
               what + " appears " + std::to_string(occurrences(script, open)) +
                   " times in the script but in " + std::to_string(found) + " of its words");
  }
}

void checkSite(const spec::PartialSpec& partial, const catalog::SiteConfig& site,
               const catalog::RuntimeRegistry& registry, const char* name) {
  if (!launch::judgeSpec(partial, site, registry).empty()) return;
  const launch::AttemptIdentity identity = fixedIdentity(partial.spec.metadata.name);
  auto assembled =
      launch::assembleLaunch(partial.spec, site, registry, identity, attemptDir(site, identity),
                             checkpointDir(site, identity));
  if (!assembled) return;  // the spec target checks that this does not happen
  launch::LaunchRequest& request = *assembled;
  const auto renderable = slurm::checkRenderable(request);
  FUZZ_CHECK(renderable.has_value(), std::string(name) + ": a valid spec is not renderable:" +
                                         describe(renderable ? Errors{} : renderable.error()));

  const std::string script = slurm::renderBatchScript(request);
  const ShellLex lex = lexShell(script);
  FUZZ_CHECK(lex.error.empty(), std::string(name) + ": " + lex.error);
  if (deepChecks()) {
    const std::string refused = bashSyntaxErrors(script);
    FUZZ_CHECK(refused.empty(), std::string(name) + ": " + refused);
  }

  // Markers count on being unique: a script that holds the stem already (from any field of
  // the spec, e.g. a pool's partition in an #SBATCH line) is not marked.
  if (script.find(kMarkerStem) != std::string::npos) return;
  const auto originals = markStrings(request);
  if (!originals) return;
  FUZZ_CHECK(slurm::checkRenderable(request).has_value(),
             std::string(name) + ": markers made the request unrenderable");
  checkMarked(slurm::renderBatchScript(request), *originals, name);
}

}  // namespace

int testOneRender(std::string_view text) {
  const spec::PartialSpec partial = spec::parsePartialJobSpec(text);
  if (!partial.complete()) return 0;
  const FuzzSite& site = fuzzSite();
  checkSite(partial, site.pyxis, site.registry, "pyxis");
  checkSite(partial, site.apptainer, site.registry, "apptainer");
  return 0;
}

}  // namespace tuneplane::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tuneplane::fuzz::testOneRender(tuneplane::fuzz::asText(data, size));
}
