// See api_negotiation.h.
#include "slurm/api_negotiation.h"

#include <algorithm>

#include <fmt/format.h>

namespace tuneplane::slurm {
namespace {

// "/slurm/v0.0.44/job/submit" → "v0.0.44"; "" for any other path.
std::string versionOfPath(std::string_view path) {
  constexpr std::string_view kPrefix = "/slurm/";
  if (path.substr(0, kPrefix.size()) != kPrefix) return "";
  path.remove_prefix(kPrefix.size());
  const size_t slash = path.find('/');
  if (slash == std::string_view::npos || slash < 2 || path[0] != 'v') return "";
  return std::string(path.substr(0, slash));
}

void addOnce(std::vector<std::string>& list, std::string name) {
  if (!name.empty() && std::find(list.begin(), list.end(), name) == list.end()) {
    list.push_back(std::move(name));
  }
}

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

Result<OfferedApis> offeredApis(std::string_view document) {
  const nlohmann::json doc = nlohmann::json::parse(document, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("openapi")) {
    return fail("slurm.bad_response", "openapi",
                "GET /openapi/v3 did not answer an OpenAPI document");
  }
  OfferedApis out;
  if (auto paths = doc.find("paths"); paths != doc.end() && paths->is_object()) {
    for (const auto& [path, operations] : paths->items()) {
      if (path.size() > 11 && path.compare(path.size() - 11, 11, "/job/submit") == 0) {
        addOnce(out.versions, versionOfPath(path));
      }
    }
  }
  const nlohmann::json x_slurm =
      doc.value("info", nlohmann::json::object()).value("x-slurm", nlohmann::json::object());
  if (out.versions.empty()) {
    for (const auto& parser : x_slurm.value("data_parsers", nlohmann::json::array())) {
      if (parser.is_object() && parser.contains("plugin") && parser["plugin"].is_string()) {
        addOnce(out.versions, parser["plugin"].get<std::string>());
      }
    }
  }
  if (auto release = x_slurm.find("release"); release != x_slurm.end() && release->is_string()) {
    out.release = release->get<std::string>();
  }
  std::sort(out.versions.begin(), out.versions.end());
  return out;
}

Result<const SlurmApi*> chooseSlurmApi(std::string_view configured,
                                       const std::vector<std::string>& offered) {
  auto serves = [&](std::string_view name) {
    return std::find(offered.begin(), offered.end(), name) != offered.end();
  };
  if (configured != kAutoApiVersion) {
    const SlurmApi* api = findSlurmApi(configured);
    if (api == nullptr) {
      return fail("slurm.config", "slurm.api_version",
                  fmt::format("TunePlane does not speak REST API '{}': set auto or one of {}",
                              configured, slurmApiNames()));
    }
    if (!serves(api->name)) {
      return fail(std::string(kErrNoCommonApi), "slurm.api_version",
                  fmt::format("slurmrestd does not serve REST API {} (slurm.api_version); it "
                              "serves {}. Set slurm.api_version to auto, or load "
                              "data_parser/{} in slurmrestd (-d)",
                              api->name, joined(offered), api->name));
    }
    return api;
  }
  const auto apis = slurmApis();
  for (auto it = apis.rbegin(); it != apis.rend(); ++it) {
    if (serves((*it)->name)) return *it;
  }
  return fail(std::string(kErrNoCommonApi), "slurm.api_version",
              fmt::format("slurmrestd serves REST API {}, and TunePlane speaks {}: none in "
                          "common. Run a slurmrestd that loads one of TunePlane's (Slurm 25.11 "
                          "serves v0.0.44, 26.05 v0.0.44 and v0.0.45)",
                          joined(offered), slurmApiNames()));
}

std::string describeChoice(const ApiChoice& choice) {
  if (choice.api == nullptr) return "no REST API version chosen";
  std::string out =
      fmt::format("REST API {} (slurm.api_version: {}", choice.api->name, choice.configured);
  if (!choice.offered.empty()) {
    out += fmt::format("; slurmrestd serves {}", joined(choice.offered));
    if (!choice.release.empty()) out += ", Slurm " + choice.release;
    if (!choice.how.empty()) out += ", from " + choice.how;
  }
  out += fmt::format("; TunePlane speaks {})", slurmApiNames());
  return out;
}

nlohmann::json choiceJson(const std::string& configured, const ApiChoice* choice) {
  nlohmann::json out = {{"configured", configured}, {"version", nullptr},
                        {"negotiated", false},      {"offered", nlohmann::json::array()},
                        {"release", nullptr},       {"degradations", nlohmann::json::array()}};
  if (choice == nullptr || choice->api == nullptr) return out;
  out["version"] = std::string(choice->api->name);
  out["negotiated"] = true;
  out["offered"] = choice->offered;
  if (!choice->release.empty()) out["release"] = choice->release;
  for (const Degradation& d : choice->api->degradations) {
    out["degradations"].push_back(
        {{"what", std::string(d.what)}, {"instead", std::string(d.instead)}});
  }
  return out;
}

}  // namespace tuneplane::slurm
