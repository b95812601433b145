// Reading test fixtures: files kept in the repository (tests/data/, golden files,
// examples/). A missing, unreadable or malformed fixture fails the test that reads it at
// once, with a message naming the file: the loaders throw FixtureError, which GoogleTest
// reports as a failure of the running test ("C++ exception … thrown in the test body"),
// so no test goes on with empty data or waits for something the data would have started.
// Thread-safe: no shared state.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tuneplane::test {

class FixtureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole file. Throws FixtureError when it is missing, not a regular file or unreadable.
std::string readFixture(const std::filesystem::path& path);

// The file parsed as JSON. Throws FixtureError as readFixture does, and when it is not JSON.
nlohmann::json readJsonFixture(const std::filesystem::path& path);

// The regular files in `dir` (only those with `extension`, e.g. ".json", when given), sorted.
// Throws FixtureError when the directory is missing or holds no such file.
std::vector<std::filesystem::path> fixtureFiles(const std::filesystem::path& dir,
                                                const std::string& extension = "");

// tests/data/slurm/transcripts/: real slurmrestd 26.05.3 exchanges (tests/data/slurm/README.md).
std::filesystem::path transcriptsDir();

// A REST API version's real data: tests/data/slurm/ for v0.0.45 (the first, at the top),
// tests/data/slurm/<version>/ for every later one (tests/data/slurm/v0.0.44/README.md); there,
// openapi-<version>.json and transcripts*/ folders.
std::filesystem::path slurmApiDataDir(const std::string& version);
// Transcript `name` of `version`, from its `folder` ("transcripts", or "transcripts-26.05").
nlohmann::json versionTranscript(const std::string& version, const std::string& name,
                                 const std::string& folder = "transcripts");

// A transcript by file name, with or without ".json" ("06_failed").
nlohmann::json transcript(const std::string& name);

// The response body of the first exchange in transcript `name` whose label starts with
// `label`. Throws FixtureError when there is none.
nlohmann::json transcriptResponseBody(const std::string& name, const std::string& label);

}  // namespace tuneplane::test
