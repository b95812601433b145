// The real slurmrestd 26.05.3 answers in tests/data/slurm/transcripts, as the bytes the
// decoders take: JSON bodies pretty-printed as slurmrestd sends them (or compact), text
// bodies verbatim. A transcript that cannot be read fails the test that asked for it at once
// (support/fixtures.h throws FixtureError naming the file).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fixtures.h"

namespace tuneplane::slurm::transcripts {

inline nlohmann::json load(const std::string& file) {
  return test::transcript(file);
}

struct Answer {
  std::string file;
  std::string label;
  std::string method;
  std::string url;
  int status = 0;
  bool is_json = false;
  nlohmann::json body;  // as recorded (a string for a text answer)
  std::string bytes;    // what the server sent
};

// A string member of `object`, "" when absent or null (some exchanges have no label).
inline std::string text(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

inline std::string bytesOf(const nlohmann::json& body, bool pretty) {
  if (body.is_string()) return body.get<std::string>();
  return pretty ? body.dump(2) : body.dump();
}

// Every exchange of every transcript, in file order.
inline std::vector<Answer> all(bool pretty = true) {
  std::vector<Answer> out;
  for (const auto& path : test::fixtureFiles(test::transcriptsDir(), ".json")) {
    const std::string file = path.filename().string();
    const nlohmann::json doc = load(file);
    if (!doc.contains("exchanges")) continue;
    for (const auto& e : doc["exchanges"]) {
      Answer a;
      a.file = file;
      a.label = text(e, "label");
      a.method = text(e["request"], "method");
      a.url = text(e["request"], "url");
      a.status = e["response"].value("status", 0);
      a.body = e["response"]["body"];
      a.is_json = !a.body.is_string();
      a.bytes = bytesOf(a.body, pretty);
      out.push_back(std::move(a));
    }
  }
  return out;
}

// The body of the exchange in `file` whose label starts with `label`, as the server sent it.
inline std::string answer(const std::string& file, const std::string& label, bool pretty = true) {
  const nlohmann::json doc = load(file);  // outlives the loop
  if (doc.contains("exchanges")) {
    for (const auto& e : doc["exchanges"]) {
      if (text(e, "label").rfind(label, 0) == 0) {
        return bytesOf(e["response"]["body"], pretty);
      }
    }
  }
  ADD_FAILURE() << "no exchange \"" << label << "\" in " << file;
  return "";
}

}  // namespace tuneplane::slurm::transcripts
