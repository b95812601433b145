// Fixture loaders that fail loudly (see fixtures.h).
#include "support/fixtures.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "support/test_paths.h"

namespace tuneplane::test {

namespace fs = std::filesystem;

std::string readFixture(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) {
    throw FixtureError("test fixture missing: " + path.string() +
                       " (the tests read their data from the repository; see tests/data/slurm/"
                       "README.md)");
  }
  if (!fs::is_regular_file(status)) {
    throw FixtureError("test fixture is not a regular file: " + path.string());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw FixtureError("test fixture unreadable: " + path.string() + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw FixtureError("test fixture unreadable: " + path.string());
  return text.str();
}

nlohmann::json readJsonFixture(const fs::path& path) {
  const std::string text = readFixture(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FixtureError("test fixture is not valid JSON: " + path.string() + ": " + e.what());
  }
}

std::vector<fs::path> fixtureFiles(const fs::path& dir, const std::string& extension) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw FixtureError("test fixture directory missing: " + dir.string());
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && (extension.empty() || entry.path().extension() == extension))
      files.push_back(entry.path());
  }
  if (ec)
    throw FixtureError("test fixture directory unreadable: " + dir.string() + ": " + ec.message());
  if (files.empty()) {
    throw FixtureError("no " + (extension.empty() ? "" : extension + " ") + "test fixtures in " +
                       dir.string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

fs::path transcriptsDir() {
  return testDataDir() / "slurm" / "transcripts";
}

fs::path slurmApiDataDir(const std::string& version) {
  return version == "v0.0.45" ? testDataDir() / "slurm" : testDataDir() / "slurm" / version;
}

nlohmann::json versionTranscript(const std::string& version, const std::string& name,
                                 const std::string& folder) {
  const bool has_extension = name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
  return readJsonFixture(slurmApiDataDir(version) / folder /
                         (has_extension ? name : name + ".json"));
}

nlohmann::json transcript(const std::string& name) {
  const bool has_extension = name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
  return readJsonFixture(transcriptsDir() / (has_extension ? name : name + ".json"));
}

nlohmann::json transcriptResponseBody(const std::string& name, const std::string& label) {
  const nlohmann::json doc = transcript(name);  // outlives the loop
  if (!doc.is_object() || !doc.contains("exchanges") || !doc["exchanges"].is_array()) {
    throw FixtureError("transcript " + name + " has no \"exchanges\" list");
  }
  for (const auto& exchange : doc["exchanges"]) {
    const auto label_of = exchange.find("label");
    if (label_of == exchange.end() || !label_of->is_string() ||
        label_of->get<std::string>().rfind(label, 0) != 0) {
      continue;
    }
    const auto response = exchange.find("response");
    if (response == exchange.end() || !response->contains("body")) {
      throw FixtureError("transcript " + name + ": exchange \"" + label_of->get<std::string>() +
                         "\" has no response body");
    }
    return (*response)["body"];
  }
  throw FixtureError("transcript " + name + " has no exchange labelled \"" + label + "…\"");
}

}  // namespace tuneplane::test
