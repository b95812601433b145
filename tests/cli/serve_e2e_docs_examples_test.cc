// The user guide's examples are true: every `$ tuneplane …` command in a block of
// docs/users.md marked `<!-- cli-example -->` is run, in order, against the simulator and
// `tuneplane serve` (e2e_fixture.h) as alice, and must exit as the block shows (0, or the
// number after `; echo $?`) and print every line the block shows under it. Volatile parts are
// compared as placeholders: the job id (the block's, learned from its `submit` line, and the
// run's), RFC 3339 times, absolute paths, the server's URL and this machine's host name. A
// command piped into another program (`| jq …`) is run without the pipe; its exit code and
// that it printed JSON are checked.
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "e2e_fixture.h"
#include "support/test_paths.h"

namespace tuneplane::cli::testing {
namespace {

struct Example {
  std::string command;                // after "$ tuneplane "
  std::vector<std::string> expected;  // the lines shown under it
};

std::vector<Example> guideExamples() {
  std::ifstream in(test::sourceDir() / "docs" / "users.md");
  std::vector<Example> examples;
  std::string line;
  bool marked = false;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "<!-- cli-example -->") {
      marked = true;
    } else if (marked && !inside && line.starts_with("```")) {
      inside = true;
    } else if (inside && line.starts_with("```")) {
      inside = marked = false;
    } else if (inside && line.starts_with("$ tuneplane ")) {
      examples.push_back({line.substr(12), {}});
    } else if (inside && !examples.empty()) {
      examples.back().expected.push_back(line);
    }
  }
  return examples;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class ServeE2eDocsExamplesTest : public ServeE2eTest {
 protected:
  std::string normalize(std::string line) const {
    if (!doc_id_.empty()) line = std::regex_replace(line, std::regex(doc_id_), "<ID>");
    if (!run_id_.empty()) line = std::regex_replace(line, std::regex(run_id_), "<ID>");
    line = std::regex_replace(line, std::regex(R"(\d{4}-\d\d-\d\dT[0-9:.]+Z)"), "<TIME>");
    line = std::regex_replace(line, std::regex(R"(https?://[0-9.]+:\d+)"), "<SERVER>");
    line = std::regex_replace(line, std::regex(R"((^|\s)/\S+)"), "$1<PATH>");
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const std::string name(host);
    if (!name.empty())
      line = std::regex_replace(line, std::regex("from " + name + ":"), "from node1:");
    std::string squeezed;
    for (const auto& w : words(line)) squeezed += (squeezed.empty() ? "" : " ") + w;
    return squeezed;
  }

  std::string doc_id_, run_id_;
};

TEST_F(ServeE2eDocsExamplesTest, EveryCliCommandInTheUsersGuideRunsAsShown) {
  const std::vector<Example> examples = guideExamples();
  ASSERT_GE(examples.size(), 5u) << "no marked example blocks found in docs/users.md";
  for (const Example& example : examples) {
    SCOPED_TRACE("$ tuneplane " + example.command);
    std::string command = example.command;
    std::vector<std::string> expected = example.expected;
    int exit_code = 0;
    if (const auto echo = command.find("; echo $?"); echo != std::string::npos) {
      command.resize(echo);
      ASSERT_FALSE(expected.empty());
      exit_code = std::stoi(expected.back());
      expected.pop_back();
    }
    const bool piped = command.find(" | ") != std::string::npos;
    if (piped) command.resize(command.find(" | "));
    std::vector<std::string> args = words(command);
    for (auto& a : args) {
      if (a == doc_id_ && !run_id_.empty()) a = run_id_;
      if (a.starts_with("examples/")) a = (test::sourceDir() / a).string();
    }
    const test::ProcessResult r = alice_->run(args);
    EXPECT_EQ(r.exit_code, exit_code) << r.out << r.err;
    if (args[0] == "submit" && !expected.empty()) {  // learn both ids: "ID submitted; …"
      const std::regex submitted(R"((\S+) submitted)");
      std::smatch doc, run;
      const std::string printed = r.out + r.err;
      ASSERT_TRUE(std::regex_search(expected.front(), doc, submitted)) << expected.front();
      ASSERT_TRUE(std::regex_search(printed, run, submitted)) << printed;
      doc_id_ = doc[1];
      run_id_ = run[1];
    }
    if (piped) {
      EXPECT_FALSE(json::parse(r.out, nullptr, false).is_discarded()) << r.out;
      continue;
    }
    std::vector<std::string> printed;
    std::istringstream lines(r.out + "\n" + r.err);
    for (std::string l; std::getline(lines, l);) printed.push_back(normalize(l));
    for (const std::string& want : expected) {
      const std::string norm = normalize(want);
      EXPECT_NE(std::find(printed.begin(), printed.end(), norm), printed.end())
          << "docs/users.md shows:\n  " << want << "\nnormalized:\n  " << norm
          << "\nthe command printed:\n"
          << r.out << r.err;
    }
  }
}

}  // namespace
}  // namespace tuneplane::cli::testing
