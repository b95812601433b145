#include "doctor/artifact_checks.h"

#include <fmt/format.h>

#include "catalog/error_codes.h"
#include "common/human.h"

namespace tuneplane::doctor {
namespace {

using nlohmann::json;

catalog::ArtifactFormat formatFor(catalog::ContainerRuntime runtime) {
  return runtime == catalog::ContainerRuntime::kApptainer ? catalog::ArtifactFormat::kSif
                                                          : catalog::ArtifactFormat::kSqsh;
}

}  // namespace

CheckResult checkRegistry(const std::string& registry_path,
                          const Checked<catalog::RuntimeRegistry>& registry) {
  const std::string name = "registry";
  json details = {{"path", registry_path}};
  if (!registry) {
    std::vector<std::string> lines;
    for (const auto& e : registry.error()) lines.push_back(e.describe());
    details["errors"] = lines;
    return failCheck(
        name,
        fmt::format("cannot use the runtime registry{}: {}",
                    registry_path.empty() ? "" : " " + registry_path, fmt::join(lines, "; ")),
        registry_path.empty()
            ? "set runtime_registry_file in the site file, or "
              "TUNEPLANE_RUNTIME_REGISTRY_FILE"
            : "fix the registry file as the errors say (`tuneplane validate` reports "
              "the same codes)",
        details);
  }
  details["runtimes"] = registry->runtimes.size();
  if (registry->runtimes.empty()) {
    return warnCheck(name, fmt::format("the runtime registry {} lists no runtimes", registry_path),
                     "publish runtime images and list them under `runtimes:` (id, format, path, "
                     "sha256): no job can run without one",
                     details);
  }
  return okCheck(name,
                 fmt::format("runtime registry {} lists {} runtime{}", registry_path,
                             registry->runtimes.size(), registry->runtimes.size() == 1 ? "" : "s"),
                 details);
}

CheckResult checkArtifact(const ArtifactFacts& f, catalog::ContainerRuntime runtime) {
  const catalog::Runtime& r = f.runtime;
  const std::string name = "artifact/" + r.id;
  json details = {{"id", r.id},
                  {"path", r.path},
                  {"format", catalog::toString(r.format)},
                  {"sha256", r.sha256}};
  if (f.size_bytes) details["size_bytes"] = *f.size_bytes;
  if (f.actual_sha256) details["actual_sha256"] = *f.actual_sha256;
  if (!f.verified) {
    const Error& e = f.verified.error();
    details["error"] = e.code;
    std::string fix;
    if (e.code == catalog::codes::kArtifactMissing) {
      fix = fmt::format(
          "publish the image at {} on the shared filesystem, or correct the path "
          "of runtime '{}' in the registry",
          r.path, r.id);
    } else if (e.code == catalog::codes::kArtifactNotRegularFile) {
      fix = fmt::format("point the path of runtime '{}' at the image file itself", r.id);
    } else if (e.code == catalog::codes::kArtifactSha256Mismatch) {
      fix = fmt::format(
          "the file changed after it was registered: put the published image "
          "back, or — if this file is the one you mean — set sha256 of runtime "
          "'{}' to {}",
          r.id, f.actual_sha256.value_or("the file's SHA-256 (sha256sum)"));
    } else {
      fix =
          fmt::format("make {} readable by the user TunePlane runs as (and the job user)", r.path);
    }
    return failCheck(name, fmt::format("runtime '{}': {} [{}]", r.id, e.message, e.code), fix,
                     details);
  }
  const std::string size = f.size_bytes ? ", " + formatBytes(*f.size_bytes) : "";
  if (r.format != formatFor(runtime)) {
    return warnCheck(
        name,
        fmt::format("runtime '{}' ({}{}) matches its SHA-256, but it is {} and this "
                    "site runs {}: launch refuses it "
                    "(launch.runtime_format_mismatch)",
                    r.id, r.path, size, catalog::toString(r.format), catalog::toString(runtime)),
        fmt::format("publish a {} image for this site, or remove runtime '{}' from "
                    "its registry",
                    catalog::toString(formatFor(runtime)), r.id),
        details);
  }
  return okCheck(
      name, fmt::format("runtime '{}' ({}{}) matches the registry's SHA-256", r.id, r.path, size),
      details);
}

}  // namespace tuneplane::doctor
