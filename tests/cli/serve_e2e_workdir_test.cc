// `tuneplane submit --workdir DIR` end to end (issue 48, "Code with the job"): the CLI sends
// the folder to the real `tuneplane serve` (POST /v1/workdirs), the spec names it, the control
// loop copies it into the attempt, and the job — in the simulator's Apptainer stand-in, which
// maps the bind to /workdir — runs the train.py it shipped; `describe` and `get` show its hash.
// Folders over the site's limits, or with a link out, are refused naming the rule.
#include <filesystem>
#include <string>

#include "common/workdir_tree.h"
#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

namespace fs = std::filesystem;

class ServeE2eWorkdirTest : public ServeE2eTest {
 protected:
  // Small limits, so a test folder can pass them.
  std::string serverExtra() const override {
    return "  workdir_max_files: 6\n  workdir_max_bytes: 4096\n";
  }

  // A folder of `files` (path → content) in the test's scratch directory.
  std::string folder(const std::string& name,
                     const std::vector<std::pair<std::string, std::string>>& files) const {
    const fs::path dir = fs::path(scratch_) / name;
    for (const auto& [path, content] : files) {
      fs::create_directories((dir / path).parent_path());
      pipeline::testing::writeFile((dir / path).string(), content);
    }
    return dir.string();
  }

  // A job that runs the shipped train.py by its path in the container.
  std::string trainSpec() {
    std::string spec = cpuSpec("unused");
    const std::string from = "    command: [\"bash\", \"-c\", \"unused\"]\n";
    spec.replace(spec.find(from), from.size(),
                 "    command: [\"python3\", \"/workdir/train.py\"]\n");
    return site_->specFile("train.yaml", spec);
  }
};

TEST_F(ServeE2eWorkdirTest, TheShippedCodeRunsAndDescribeShowsItsHash) {
  const std::string dir =
      folder("code", {{"train.py",
                       "import os, pathlib\n"
                       "here = pathlib.Path(os.environ['TUNEPLANE_WORKDIR'])\n"
                       "print('trained with', (here / 'lib' / 'config.txt').read_text().strip())\n"
                       "print('workdir', os.environ['TUNEPLANE_WORKDIR'])\n"},
                      {"lib/config.txt", "lr=0.1\n"}});
  auto tree = workdir::readWorkdirDir(dir, {});
  ASSERT_TRUE(tree) << tree.error().describe();
  const std::string sha256 = workdir::workdirTreeSha256(*tree);

  const auto submitted = alice_->run({"submit", trainSpec(), "--workdir", dir, "--wait"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  EXPECT_NE(submitted.err.find("sha256:" + sha256), std::string::npos) << submitted.err;
  const std::string id = waitForJobs(1);
  ASSERT_FALSE(id.empty());
  const auto logs = alice_->run({"logs", id});
  EXPECT_NE(logs.out.find("trained with lr=0.1"), std::string::npos) << logs.out << logs.err;
  // /workdir in a container; the simulator's stand-in, which runs on the host, maps the bind
  // to the attempt's copy (…/attempts/1/workdir).
  EXPECT_NE(logs.out.find("/workdir\n"), std::string::npos) << logs.out;

  const auto described = alice_->run({"describe", id});
  EXPECT_NE(described.out.find("sha256:" + sha256 + " (read-only at /workdir)"), std::string::npos)
      << described.out;
  const json job = json::parse(alice_->run({"get", id, "-o", "json"}).out, nullptr, false);
  ASSERT_TRUE(job.is_object());
  EXPECT_EQ(job["workdir"].value("sha256", ""), sha256) << job.dump(2);
  EXPECT_EQ(job["workdir"].value("path", ""), "/workdir");
  // The attempt holds a read-only copy, byte for byte the folder that was sent.
  const std::string copy = job["attempts"][0].value("staging_dir", "") + "/workdir";
  auto staged = workdir::readWorkdirDir(copy, {});
  ASSERT_TRUE(staged) << staged.error().describe();
  EXPECT_EQ(workdir::workdirTreeSha256(*staged), sha256);
  EXPECT_EQ(fs::status(copy + "/train.py").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);

  // The same folder again is the same upload; the job's spec names it as before.
  const auto again = alice_->run({"submit", trainSpec(), "--workdir", dir});
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

TEST_F(ServeE2eWorkdirTest, FoldersOverTheLimitsOrWithALinkOutAreRefusedNamingTheRule) {
  const std::string many =
      folder("many", {{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d/e", "4"}, {"d/f", "5"}, {"g", "6"}});
  const auto too_many = alice_->run({"submit", trainSpec(), "--workdir", many});
  EXPECT_EQ(too_many.exit_code, 2) << too_many.err;
  EXPECT_NE(too_many.err.find("[workdir.too_many_files]"), std::string::npos) << too_many.err;
  EXPECT_NE(too_many.err.find("server.workdir_max_files"), std::string::npos) << too_many.err;

  const std::string big = folder("big", {{"weights.bin", std::string(5000, 'w')}});
  const auto too_large = alice_->run({"submit", trainSpec(), "--workdir", big});
  EXPECT_EQ(too_large.exit_code, 2) << too_large.err;
  EXPECT_NE(too_large.err.find("[workdir.too_large]"), std::string::npos) << too_large.err;
  EXPECT_NE(too_large.err.find("server.workdir_max_bytes"), std::string::npos) << too_large.err;

  const std::string linked = folder("linked", {{"train.py", "print(1)\n"}});
  fs::create_symlink("/etc/hostname", fs::path(linked) / "secret");
  const auto link_out = alice_->run({"submit", trainSpec(), "--workdir", linked});
  EXPECT_EQ(link_out.exit_code, 2) << link_out.err;
  EXPECT_NE(link_out.err.find("[workdir.symlink]"), std::string::npos) << link_out.err;

  // A spec that names a folder its user never sent: refused before a job exists.
  std::string spec = cpuSpec("echo never");
  spec += "  workdir: sha256:" + std::string(64, 'a') + "\n";
  const auto unknown = alice_->run({"submit", site_->specFile("unknown.yaml", spec)});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("[workdir.unknown]"), std::string::npos) << unknown.err;
  const json listed = json::parse(alice_->run({"get", "-o", "json"}).out, nullptr, false);
  EXPECT_TRUE(listed["items"].empty()) << listed.dump(2);
  // Nothing of a refused folder was kept.
  const fs::path uploads = fs::path(site_->stagingRoot()) / "workdirs" / "alice";
  EXPECT_TRUE(!fs::exists(uploads) || fs::is_empty(uploads));
}

}  // namespace
}  // namespace tuneplane::cli::testing
