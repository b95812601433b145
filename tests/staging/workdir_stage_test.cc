// A job's code (spec.workdir): the upload store (workdir_store.h) keeps one sealed copy per
// tree and user, idempotently and never half-written; every attempt gets a byte-identical,
// read-only copy of it in <attempt>/workdir (stager.h), or none at all.
#include "staging/workdir_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <utility>

#include "sample_request.h"
#include "staging/stager.h"
#include "staging/staging_paths.h"
#include "support/test_files.h"

namespace tuneplane::staging {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

mode_t permissionsOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Every entry under `dir` (relative path → content, "/" for a folder) and its mode.
std::map<std::string, std::pair<std::string, mode_t>> snapshot(const fs::path& dir) {
  std::map<std::string, std::pair<std::string, mode_t>> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(entry.path(), dir).string();
    out[rel] = {entry.is_directory() ? "/" : test::readFile(entry.path()),
                permissionsOf(entry.path())};
  }
  return out;
}

// The real filesystem, but the `fail_at`-th file write (from 0) fails, having written half.
class WriteFailingFs final : public StagingFs {
 public:
  explicit WriteFailingFs(int fail_at) : fail_at_(fail_at) {}

  // StagingFs
  Status makeDirs(const std::string& p, mode_t m) override { return real_.makeDirs(p, m); }
  Result<std::string> makeTempDir(const std::string& p) override { return real_.makeTempDir(p); }
  Status makeDir(const std::string& p, mode_t m) override { return real_.makeDir(p, m); }
  Status makeInheritingDir(const std::string& p, mode_t m) override {
    return real_.makeInheritingDir(p, m);
  }
  Status makeInheritingDirs(const std::string& p, mode_t m) override {
    return real_.makeInheritingDirs(p, m);
  }
  Status writeFile(const std::string& p, const std::string& c, mode_t m) override {
    if (writes_++ == fail_at_) {
      (void)real_.writeFile(p, c.substr(0, c.size() / 2), m);
      return fail("staging.io", p, "injected: the disk is full");
    }
    return real_.writeFile(p, c, m);
  }
  Status syncFile(const std::string& p) override { return real_.syncFile(p); }
  Status changeMode(const std::string& p, mode_t m) override { return real_.changeMode(p, m); }
  Status changeGroup(const std::string& p, gid_t g) override { return real_.changeGroup(p, g); }
  Result<std::optional<PathInfo>> statPath(const std::string& p) override {
    return real_.statPath(p);
  }
  Status syncDir(const std::string& p) override { return real_.syncDir(p); }
  Status renameNoReplace(const std::string& f, const std::string& t) override {
    return real_.renameNoReplace(f, t);
  }
  bool exists(const std::string& p) override { return real_.exists(p); }
  void removeTree(const std::string& p) override { real_.removeTree(p); }
  void removeTempDirs(const std::string& p) override { real_.removeTempDirs(p); }

 private:
  PosixStagingFs real_;
  int fail_at_;
  int writes_ = 0;
};

// TunePlane runs as the job user.
JobAccess jobUserIsMe() {
  JobAccess access;
  access.job_user = access.process_user = OsUser{"me", ::geteuid(), ::getegid()};
  access.job_groups = {::getegid()};
  return access;
}

class WorkdirStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-workdir-stage-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    auto made = workdir::makeTree({{"train.py", false, false, "print('trained')\n"},
                                   {"run.sh", false, true, "#!/bin/sh\npython3 train.py\n"},
                                   {"pkg/model.py", false, false, "LAYERS = 2\n"},
                                   {"data/empty", true, false, {}}},
                                  {});
    ASSERT_TRUE(made) << made.error().describe();
    tree_ = *made;
    sha256_ = workdir::workdirTreeSha256(tree_);
  }
  void TearDown() override { PosixStagingFs().removeTree(root_); }

  launch::LaunchRequest requestFor(int attempt, const std::string& source) {
    auto dir = attemptDir(root_, "hello-0a1b2c3d", attempt);
    EXPECT_TRUE(dir);
    launch::LaunchRequest request = testing::sampleRequest(*dir);
    request.identity.attempt = attempt;
    request.workdir = launch::Workdir{sha256_, source, *dir + "/workdir", "/workdir"};
    return request;
  }

  std::string root_;
  workdir::Tree tree_;
  std::string sha256_;
  PosixStagingFs fs_;
  JobAccess access_ = jobUserIsMe();
};

TEST_F(WorkdirStageTest, AnUploadIsStoredOnceSealedAndUnderItsHash) {
  auto first = storeWorkdir(root_, "alice", tree_, fs_);
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->sha256, sha256_);
  EXPECT_EQ(first->dir, root_ + "/workdirs/alice/" + sha256_);
  EXPECT_EQ(permissionsOf(first->dir), 0500u);
  EXPECT_EQ(permissionsOf(first->dir + "/train.py"), 0400u);
  EXPECT_EQ(permissionsOf(first->dir + "/run.sh"), 0500u);
  EXPECT_EQ(permissionsOf(first->dir + "/pkg"), 0500u);
  EXPECT_EQ(permissionsOf(root_ + "/workdirs"), 0700u);
  // The same folder again: the same upload, nothing rewritten.
  const auto before = snapshot(first->dir);
  auto second = storeWorkdir(root_, "alice", tree_, fs_);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->created);
  EXPECT_EQ(second->dir, first->dir);
  EXPECT_EQ(snapshot(first->dir), before);
  // Another user's uploads are their own.
  auto has = hasStoredWorkdir(root_, "bob", sha256_, fs_);
  ASSERT_TRUE(has);
  EXPECT_FALSE(*has);
  has = hasStoredWorkdir(root_, "alice", sha256_, fs_);
  ASSERT_TRUE(has);
  EXPECT_TRUE(*has);
  auto loaded = loadStoredWorkdir(first->dir, sha256_);
  ASSERT_TRUE(loaded) << loaded.error().describe();
  EXPECT_EQ(*loaded, tree_);
}

TEST_F(WorkdirStageTest, AFailedWriteLeavesNoUploadAndNoTemporaryFolder) {
  for (int fail_at = 0; fail_at < 3; ++fail_at) {
    WriteFailingFs failing(fail_at);
    auto stored = storeWorkdir(root_, "alice", tree_, failing);
    ASSERT_FALSE(stored) << "write " << fail_at;
    EXPECT_EQ(stored.error().code, "staging.io");
    ASSERT_TRUE(fs::exists(root_ + "/workdirs/alice"));
    EXPECT_TRUE(fs::is_empty(root_ + "/workdirs/alice")) << "write " << fail_at;
  }
}

TEST_F(WorkdirStageTest, UserNamesAndHashesCannotLeaveTheStore) {
  for (const char* user : {"..", "a/b", "", "Alice", "-x"}) {
    auto dir = workdirUploadDir(root_, user, sha256_);
    ASSERT_FALSE(dir) << user;
    EXPECT_EQ(dir.error().code, "staging.invalid_user");
  }
  auto dir = workdirUploadDir(root_, "alice", "../../etc");
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().code, workdir::codes::kUnknown);
}

TEST_F(WorkdirStageTest, EveryAttemptGetsTheSameBytesReadOnly) {
  auto stored = storeWorkdir(root_, "alice", tree_, fs_);
  ASSERT_TRUE(stored) << stored.error().describe();
  for (int attempt : {1, 2}) {
    auto staged = stageAttempt(requestFor(attempt, stored->dir), "#!/bin/bash\n",
                               nlohmann::json::object(), access_, fs_);
    ASSERT_TRUE(staged) << staged.error().describe();
    ASSERT_TRUE(staged->files.count("workdir"));
    EXPECT_EQ(staged->files.at("workdir").sha256, sha256_);
  }
  const fs::path one = requestFor(1, "").workdir->dir;
  const fs::path two = requestFor(2, "").workdir->dir;
  const auto first = snapshot(one);
  EXPECT_EQ(first, snapshot(two));
  EXPECT_EQ(first.at("train.py").first, "print('trained')\n");
  // Read-only for the job: files 0444 (0555 executable), folders 0555 like the attempt dir.
  EXPECT_EQ(first.at("train.py").second, 0444u);
  EXPECT_EQ(first.at("run.sh").second, 0555u);
  EXPECT_EQ(first.at("pkg").second, 0555u);
  EXPECT_EQ(first.at("data/empty").second, 0555u);
  EXPECT_EQ(permissionsOf(one), 0555u);
  // What the attempt holds is what the upload's name says.
  auto read_back = workdir::readWorkdirDir(one.string(), {});
  ASSERT_TRUE(read_back);
  EXPECT_EQ(workdir::workdirTreeSha256(*read_back), sha256_);
  // The manifest names the copy by its tree hash.
  const auto manifest =
      nlohmann::json::parse(test::readFile(attemptFile(one.parent_path().string(), kManifestFile)));
  EXPECT_EQ(manifest["files"]["workdir"]["sha256"], sha256_);
}

TEST_F(WorkdirStageTest, AMissingOrChangedUploadStagesNothing) {
  auto missing = stageAttempt(requestFor(1, root_ + "/workdirs/alice/" + sha256_), "#!/bin/bash\n",
                              nlohmann::json::object(), access_, fs_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, workdir::codes::kUnknown);
  EXPECT_EQ(missing.error().field, "spec.workdir");
  auto no_source =
      stageAttempt(requestFor(1, ""), "#!/bin/bash\n", nlohmann::json::object(), access_, fs_);
  ASSERT_FALSE(no_source);
  EXPECT_EQ(no_source.error().code, workdir::codes::kUnknown);
  // An upload whose bytes changed behind serve's back is not what its name says.
  auto stored = storeWorkdir(root_, "alice", tree_, fs_);
  ASSERT_TRUE(stored);
  fs::permissions(stored->dir, fs::perms::owner_all);
  fs::permissions(stored->dir + "/train.py", fs::perms::owner_all);
  test::writeFile(stored->dir + "/train.py", "print('changed')\n");
  auto changed = stageAttempt(requestFor(1, stored->dir), "#!/bin/bash\n", nlohmann::json::object(),
                              access_, fs_);
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.error().code, workdir::codes::kMismatch);
  EXPECT_THAT(changed.error().message, HasSubstr(sha256_));
  EXPECT_FALSE(fs::exists(requestFor(1, "").attempt_dir));
}

}  // namespace
}  // namespace tuneplane::staging
