// `tuneplane completion bash`: the script comes from the command tree main() runs, passes
// `bash -n`, and — driven the way bash drives it (COMP_WORDS, COMP_CWORD) — offers every
// subcommand and every flag of every command, each at its own level.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/completion.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::cli {
namespace {

struct Expected {
  std::vector<std::string> path;  // subcommand names below the root
  std::set<std::string> subcommands;
  std::set<std::string> flags;
};

// The tree as CLI11 reports it, walked here independently of the generator.
void expectedWords(const CLI::App& app, std::vector<std::string> path, std::vector<Expected>& out) {
  Expected expected{path, {}, {}};
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    expected.subcommands.insert(sub->get_name());
    std::vector<std::string> below = path;
    below.push_back(sub->get_name());
    expectedWords(*sub, below, out);
  }
  for (const CLI::Option* option : app.get_options()) {
    for (const auto& name : option->get_lnames()) expected.flags.insert("--" + name);
    for (const auto& name : option->get_snames()) expected.flags.insert("-" + name);
  }
  out.push_back(expected);
}

class CompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-completion-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    app_ = makeApp();
    script_ = bashCompletion(*app_);
    std::ofstream(dir_ / "tuneplane.bash") << script_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // What the completion function offers for `tuneplane WORDS... CUR<TAB>`, one per line.
  std::set<std::string> complete(const std::vector<std::string>& words, const std::string& cur) {
    std::string comp_words = "tuneplane";
    for (const auto& word : words) comp_words += " '" + word + "'";
    comp_words += " '" + cur + "'";
    const std::string program = "source '" + (dir_ / "tuneplane.bash").string() +
                                "'; COMP_WORDS=(" + comp_words +
                                "); COMP_CWORD=" + std::to_string(words.size() + 1) +
                                "; _tuneplane; printf '%s\\n' \"${COMPREPLY[@]}\"";
    const auto result = test::runProcess({"bash", "-c", program}, {.scratch = dir_});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::set<std::string> offered;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) offered.insert(line);
    }
    return offered;
  }

  std::filesystem::path dir_;
  std::unique_ptr<CLI::App> app_;
  std::string script_;
};

TEST_F(CompletionTest, TheBinaryPrintsTheScriptOfItsOwnTree) {
  const auto result =
      test::runProcess({(test::binaryDir() / "src/cli/tuneplane").string(), "completion", "bash"},
                       {.scratch = dir_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, script_);
  EXPECT_NE(script_.find("complete -o default -F _tuneplane tuneplane"), std::string::npos);
}

TEST_F(CompletionTest, OnlyBashIsAShell) {
  const auto result = test::runProcess(
      {(test::binaryDir() / "src/cli/tuneplane").string(), "completion", "zsh"}, {.scratch = dir_});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(result.out.empty());
}

TEST_F(CompletionTest, ScriptPassesBashSyntaxCheck) {
  const auto result =
      test::runProcess({"bash", "-n", (dir_ / "tuneplane.bash").string()}, {.scratch = dir_});
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST_F(CompletionTest, EverySubcommandAndFlagIsOfferedAtItsLevel) {
  std::vector<Expected> tree;
  expectedWords(*app_, {}, tree);
  ASSERT_GT(tree.size(), 10u);  // the root, its commands and theirs (slurm submit, …)
  for (const auto& command : tree) {
    std::string where = "tuneplane";
    for (const auto& word : command.path) where += " " + word;
    if (!command.subcommands.empty()) {
      EXPECT_EQ(complete(command.path, ""), command.subcommands) << where;
    }
    EXPECT_EQ(complete(command.path, "-"), command.flags) << where;
  }
}

TEST_F(CompletionTest, FlagsBetweenSubcommandsDoNotLoseThePath) {
  const auto submit_flags = complete({"slurm", "submit"}, "--");
  EXPECT_EQ(submit_flags.count("--help"), 1u);
  EXPECT_EQ(complete({"slurm", "--help", "submit"}, "--"), submit_flags);
  EXPECT_TRUE(complete({"validate", "--site"}, "").empty());  // a value: bash completes files
  EXPECT_EQ(complete({}, "val"), std::set<std::string>{"validate"});
}

}  // namespace
}  // namespace tuneplane::cli
