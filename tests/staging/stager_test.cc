// stageAttempt: the on-disk layout, read-only modes, no overwrite, and atomicity — a failure
// at any filesystem step leaves no attempt and no temporary directory behind.
#include "staging/stager.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "launch/attempt_identity.h"
#include "recording_staging_fs.h"
#include "sample_request.h"
#include "staging/job_fence.h"
#include "staging/launch_request_json.h"
#include "staging/staging_fs.h"
#include "staging/staging_paths.h"
#include "support/test_files.h"

namespace tuneplane::staging {
namespace {

namespace fs = std::filesystem;

using testing::RecordingStagingFs;

using test::readFile;  // support/test_files.h

mode_t modeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::vector<std::string> entriesOf(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// Passes every call to the real filesystem, except that the call numbered `fail_at`
// (counting every mutating call from 0) fails. A failing writeFile first writes half its
// content, like a disk that fills up mid-write.
class FaultyStagingFs final : public StagingFs {
 public:
  explicit FaultyStagingFs(int fail_at) : fail_at_(fail_at) {}
  int calls() const { return calls_; }
  std::string failedCall() const { return failed_; }

  // StagingFs
  Status makeDirs(const std::string& path, mode_t mode) override {
    if (shouldFail("makeDirs")) return injected(path);
    return real_.makeDirs(path, mode);
  }
  Result<std::string> makeTempDir(const std::string& prefix) override {
    if (shouldFail("makeTempDir")) return injected(prefix);
    return real_.makeTempDir(prefix);
  }
  Status makeDir(const std::string& path, mode_t mode) override {
    if (shouldFail("makeDir")) return injected(path);
    return real_.makeDir(path, mode);
  }
  Status makeInheritingDir(const std::string& path, mode_t mode) override {
    if (shouldFail("makeInheritingDir")) return injected(path);
    return real_.makeInheritingDir(path, mode);
  }
  Status makeInheritingDirs(const std::string& path, mode_t mode) override {
    if (shouldFail("makeInheritingDirs")) return injected(path);
    return real_.makeInheritingDirs(path, mode);
  }
  Status writeFile(const std::string& path, const std::string& content, mode_t mode) override {
    if (shouldFail("writeFile")) {
      std::ofstream(path) << content.substr(0, content.size() / 2);
      return injected(path);
    }
    return real_.writeFile(path, content, mode);
  }
  Status syncFile(const std::string& path) override {
    if (shouldFail("syncFile")) return injected(path);
    return real_.syncFile(path);
  }
  Status changeMode(const std::string& path, mode_t mode) override {
    if (shouldFail("changeMode")) return injected(path);
    return real_.changeMode(path, mode);
  }
  Status changeGroup(const std::string& path, gid_t group) override {
    if (shouldFail("changeGroup")) return injected(path);
    return real_.changeGroup(path, group);
  }
  Result<std::optional<PathInfo>> statPath(const std::string& path) override {
    return real_.statPath(path);
  }
  Status syncDir(const std::string& path) override {
    if (shouldFail("syncDir")) return injected(path);
    return real_.syncDir(path);
  }
  Status renameNoReplace(const std::string& from, const std::string& to) override {
    if (shouldFail("renameNoReplace")) return injected(to);
    return real_.renameNoReplace(from, to);
  }
  bool exists(const std::string& path) override { return real_.exists(path); }
  void removeTree(const std::string& path) override { real_.removeTree(path); }
  void removeTempDirs(const std::string& prefix) override { real_.removeTempDirs(prefix); }

 private:
  bool shouldFail(const char* call) {
    if (calls_++ != fail_at_) return false;
    failed_ = call;
    return true;
  }
  static tl::unexpected<Error> injected(const std::string& path) {
    return fail("staging.io", path, "injected failure");
  }

  PosixStagingFs real_;
  int fail_at_;
  int calls_ = 0;
  std::string failed_;
};

// TunePlane is the job user (this process).
JobAccess sameUser() {
  JobAccess access;
  access.job_user = access.process_user = OsUser{"me", ::geteuid(), ::getegid()};
  access.job_groups = {::getegid()};
  return access;
}

// Another job user, 4242, writes through a shared group. The group is this process's own
// effective gid, so the stager's real chown works without root; RecordingStagingFs shows
// which group each path was given.
JobAccess sharedGroup() {
  JobAccess access;
  access.mode = JobAccessMode::kSharedGroup;
  access.job_user = OsUser{"job", 4242, 4242};
  access.job_groups = {4242, ::getegid()};
  access.process_user = OsUser{"me", ::geteuid(), ::getegid()};
  access.group = OsGroup{"shared", ::getegid()};
  return access;
}

class StagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-stager-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    auto dir = attemptDir(root_, "hello-0a1b2c3d", 2);
    ASSERT_TRUE(dir);
    attempt_dir_ = *dir;
    request_ = testing::sampleRequest(attempt_dir_);
    body_ = {{"script", script_}, {"job", {{"name", "hello"}}}};
  }
  void TearDown() override { PosixStagingFs().removeTree(root_); }

  std::string attemptsDir() const { return parentDir(attempt_dir_); }

  std::string root_;
  std::string attempt_dir_;
  launch::LaunchRequest request_;
  std::string script_ = "#!/bin/bash\necho hello\n";
  nlohmann::json body_;
  PosixStagingFs fs_;
  JobAccess access_ = sameUser();  // TunePlane runs as the job user
};

TEST_F(StagerTest, WritesTheLayoutWithFaithfulContents) {
  auto staged = stageAttempt(request_, script_, body_, access_, fs_);
  ASSERT_TRUE(staged) << staged.error().describe();
  EXPECT_EQ(staged->dir, attempt_dir_);

  EXPECT_EQ(readFile(attemptFile(attempt_dir_, kScriptFile)), script_);
  EXPECT_EQ(nlohmann::json::parse(readFile(attemptFile(attempt_dir_, kSubmitFile))), body_);
  auto loaded = launchRequestFromJson(
      nlohmann::json::parse(readFile(attemptFile(attempt_dir_, kLaunchFile))));
  ASSERT_TRUE(loaded) << loaded.error().describe();
  EXPECT_EQ(launchRequestToJson(*loaded), launchRequestToJson(request_));
  EXPECT_TRUE(fs::is_directory(attemptFile(attempt_dir_, kLogsDir)));
  EXPECT_TRUE(fs::is_directory(attemptFile(attempt_dir_, kOutputDir)));

  auto entries = entriesOf(attempt_dir_);
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"job.sh", "launch.json", "llamafactory.yaml", "logs",
                                               "manifest.json", "output", "submit.json"}));
  EXPECT_EQ(readFile(attemptFile(attempt_dir_, "llamafactory.yaml")), request_.inputs[0].content);
  EXPECT_TRUE(fs::is_directory(request_.checkpoint_dir));
  // Nothing but the attempt in the attempts folder: the temporary directory was renamed.
  EXPECT_EQ(entriesOf(attemptsDir()), std::vector<std::string>{"2"});
}

// The job's fence (job_fence.h): staging attempt n adds fence/<n> beside the attempts, before
// the attempt's directory exists, read-only, once; a later stage of the same attempt (a crashed
// try) finds it made.
TEST_F(StagerTest, StagingAnAttemptMarksTheJobsFenceFirst) {
  const std::string fence = launch::fenceDirFor(attempt_dir_);
  EXPECT_EQ(fence, parentDir(attemptsDir()) + "/fence");
  FaultyStagingFs counting(-1);
  ASSERT_TRUE(stageAttempt(request_, script_, body_, access_, counting));
  EXPECT_EQ(entriesOf(fence), std::vector<std::string>{"2"});
  EXPECT_EQ(fs::status(fence + "/2").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_EQ(fs::status(fence).permissions() & fs::perms::all,
            fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                fs::perms::others_read | fs::perms::others_exec);
  // The mark goes first: a stage that fails on its first write of the attempt leaves the mark
  // and no attempt; the retry finds it and does not make it again.
  for (int fail_at = 0;; ++fail_at) {
    fs_.removeTree(root_ + "/jobs");
    FaultyStagingFs faulty(fail_at);
    auto staged = stageAttempt(request_, script_, body_, access_, faulty);
    ASSERT_FALSE(staged);
    if (faulty.failedCall() == "makeTempDir") break;  // the first step of the attempt's own
    ASSERT_LT(fail_at, 10) << "no temporary directory made in the first steps";
  }
  EXPECT_TRUE(fs::exists(fence + "/2"));
  EXPECT_FALSE(fs::exists(attempt_dir_));
  ASSERT_TRUE(markAttemptStaged(fence, 2, fs_));  // idempotent
  EXPECT_TRUE(stageAttempt(request_, script_, body_, access_, fs_));
  EXPECT_EQ(entriesOf(fence), std::vector<std::string>{"2"});
}

TEST_F(StagerTest, ManifestHoldsTheSha256OfEveryStagedFile) {
  auto staged = stageAttempt(request_, script_, body_, access_, fs_);
  ASSERT_TRUE(staged) << staged.error().describe();
  const auto manifest = nlohmann::json::parse(readFile(attemptFile(attempt_dir_, kManifestFile)));
  EXPECT_EQ(manifest, manifestJson(*staged));
  ASSERT_EQ(manifest["files"].size(), 4u);
  for (const char* name : {"launch.json", "job.sh", "submit.json", "llamafactory.yaml"}) {
    const std::string content = readFile(attemptFile(attempt_dir_, name));
    EXPECT_EQ(manifest["files"][name]["sha256"], sha256Hex(content)) << name;
    EXPECT_EQ(manifest["files"][name]["bytes"], content.size()) << name;
  }
  // Known vector, so sha256Hex itself is checked against the standard.
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(StagerTest, FilesAndAttemptDirAreReadOnlyButLogsAndOutputAreWritable) {
  const mode_t old_umask = ::umask(0077);  // the modes are the contract, whatever the umask
  auto staged = stageAttempt(request_, script_, body_, access_, fs_);
  ::umask(old_umask);
  ASSERT_TRUE(staged) << staged.error().describe();
  for (std::string_view name : {kLaunchFile, kScriptFile, kSubmitFile, kManifestFile,
                                std::string_view("llamafactory.yaml")}) {
    EXPECT_EQ(modeOf(attemptFile(attempt_dir_, name)), 0444u) << name;
  }
  EXPECT_EQ(modeOf(attempt_dir_), 0555u);
  EXPECT_EQ(modeOf(attemptFile(attempt_dir_, kLogsDir)), 0755u);
  EXPECT_EQ(modeOf(attemptFile(attempt_dir_, kOutputDir)), 0755u);
}

TEST_F(StagerTest, MakeDirsGivesEachMissingLevelItsModeAndLeavesExistingOnesAlone) {
  const std::string existing = root_ + "/jobs";
  ASSERT_EQ(::mkdir(existing.c_str(), 0700), 0);
  const std::string deep = existing + "/a/b/attempts";
  const mode_t old_umask = ::umask(0077);
  auto made = fs_.makeDirs(deep, 0751);
  auto again = fs_.makeDirs(deep, 0755);  // there already: nothing changes
  ::umask(old_umask);
  ASSERT_TRUE(made) << made.error().describe();
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(modeOf(existing), 0700u);
  for (const std::string& dir : {existing + "/a", existing + "/a/b", deep}) {
    EXPECT_EQ(modeOf(dir), 0751u) << dir;
  }
  // A file where a directory should be is an error naming that path, at any level.
  const std::string file = root_ + "/plain";
  { std::ofstream(file) << "x"; }
  for (const std::string& path : {file, file + "/below"}) {
    auto refused = fs_.makeDirs(path, 0755);
    ASSERT_FALSE(refused) << path;
    EXPECT_EQ(refused.error().code, "staging.io") << path;
    EXPECT_NE(refused.error().message.find(file), std::string::npos) << refused.error().describe();
  }
}

TEST_F(StagerTest, AnExistingAttemptIsNeverOverwritten) {
  ASSERT_TRUE(stageAttempt(request_, script_, body_, access_, fs_));
  const std::string first = readFile(attemptFile(attempt_dir_, kScriptFile));

  auto again = stageAttempt(request_, "#!/bin/bash\necho other\n", body_, access_, fs_);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, "staging.attempt_exists");
  EXPECT_EQ(readFile(attemptFile(attempt_dir_, kScriptFile)), first);
  EXPECT_EQ(entriesOf(attemptsDir()), std::vector<std::string>{"2"});
}

TEST_F(StagerTest, AnEmptyDirectoryInTheWayIsNotReplacedEither) {
  ASSERT_TRUE(fs_.makeDirs(attempt_dir_, 0755));
  auto staged = stageAttempt(request_, script_, body_, access_, fs_);
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().code, "staging.attempt_exists");
  EXPECT_TRUE(entriesOf(attempt_dir_).empty());
}

TEST_F(StagerTest, RenameRefusesAnExistingTargetEvenAfterTheEarlyCheck) {
  // The race the early exists() check cannot close: the target appears between the check
  // and the rename. renameNoReplace must still refuse it.
  const std::string from = root_ + "/from";
  ASSERT_TRUE(fs_.makeDirs(from + "/x", 0755));
  ASSERT_TRUE(fs_.makeDirs(root_ + "/to", 0755));
  auto renamed = fs_.renameNoReplace(from, root_ + "/to");
  ASSERT_FALSE(renamed);
  EXPECT_EQ(renamed.error().code, "staging.attempt_exists");
  EXPECT_TRUE(fs::is_directory(from + "/x"));
}

TEST_F(StagerTest, AttemptDirMustBeCleanAndAbsolute) {
  for (const std::string dir : {"relative/2", "/shared/../etc", "/", ""}) {
    request_.attempt_dir = dir;
    auto staged = stageAttempt(request_, script_, body_, access_, fs_);
    ASSERT_FALSE(staged) << dir;
    EXPECT_EQ(staged.error().code, "staging.invalid_attempt_dir") << dir;
  }
  EXPECT_TRUE(entriesOf(root_).empty());
}

TEST_F(StagerTest, AFailureAtAnyStepLeavesNoAttemptAndNoTemporaryDirectory) {
  ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);  // the shared-group job user must get through
  for (const JobAccess& access : {sameUser(), sharedGroup()}) {
    SCOPED_TRACE(access.describe());
    FaultyStagingFs counting(-1);
    ASSERT_TRUE(stageAttempt(request_, script_, body_, access, counting));
    const int total = counting.calls();
    ASSERT_GT(total, 10);
    fs_.removeTree(root_ + "/jobs");

    // Every call but the last: the last is the parent's fsync after the rename, tested below.
    for (int fail_at = 0; fail_at < total - 1; ++fail_at) {
      // A failure may leave the job's fence marked (what a later stage of the attempt needs
      // anyway); each step starts as the first try did.
      fs_.removeTree(launch::fenceDirFor(attempt_dir_));
      fs_.removeTree(request_.checkpoint_dir);  // each try makes it, as the first stage does
      FaultyStagingFs faulty(fail_at);
      auto staged = stageAttempt(request_, script_, body_, access, faulty);
      ASSERT_FALSE(staged) << "step " << fail_at << " (" << faulty.failedCall() << ")";
      EXPECT_EQ(staged.error().code, "staging.io") << faulty.failedCall();
      EXPECT_FALSE(fs::exists(attempt_dir_))
          << "step " << fail_at << " (" << faulty.failedCall() << ") left the attempt behind";
      EXPECT_TRUE(entriesOf(attemptsDir()).empty())
          << "step " << fail_at << " (" << faulty.failedCall() << ") left "
          << (entriesOf(attemptsDir()).empty() ? "" : entriesOf(attemptsDir()).front());
    }
    // A failed attempt never blocks the next try of the same attempt.
    EXPECT_TRUE(stageAttempt(request_, script_, body_, access, fs_));
    fs_.removeTree(root_ + "/jobs");
  }
}

TEST_F(StagerTest, WhatACrashedTryOfTheAttemptLeftIsRemovedBeforeItIsStagedAgain) {
  // A serve SIGKILLed mid-stage leaves its temporary sibling, read-only and half-written;
  // another attempt's, and a name that only begins alike, are not this attempt's.
  ASSERT_TRUE(fs_.makeDirs(attemptsDir(), 0755));
  auto crashed = fs_.makeTempDir(stagingTempPrefix(attempt_dir_));
  ASSERT_TRUE(crashed);
  ASSERT_TRUE(fs_.writeFile(attemptFile(*crashed, kLaunchFile), "{\"half\":", 0444));
  ASSERT_EQ(::chmod(crashed->c_str(), 0555), 0);
  auto other = fs_.makeTempDir(stagingTempPrefix(attemptsDir() + "/3"));
  ASSERT_TRUE(other);
  const std::string alike = stagingTempPrefix(attempt_dir_) + "notmkdtemp";
  ASSERT_TRUE(fs_.makeDir(alike, 0700));

  auto staged = stageAttempt(request_, script_, body_, access_, fs_);
  ASSERT_TRUE(staged) << staged.error().describe();
  EXPECT_FALSE(fs::exists(*crashed));
  EXPECT_TRUE(fs::exists(*other));
  EXPECT_TRUE(fs::exists(alike));
  EXPECT_EQ(nlohmann::json::parse(readFile(attemptFile(attempt_dir_, kLaunchFile)))["attempt_dir"],
            attempt_dir_);
}

TEST_F(StagerTest, EveryFileIsWrittenBeforeAnyIsSyncedAndAllAreDurableBeforeTheRename) {
  // Synced as written, each file paid a journal commit of its own; written first, the first
  // sync carries them all. Still, nothing becomes the attempt before it is durable.
  RecordingStagingFs recording;
  auto staged = stageAttempt(request_, script_, body_, access_, recording);
  ASSERT_TRUE(staged) << staged.error().describe();
  std::vector<std::string> io;
  for (const auto& call : recording.calls) {
    if (!call.starts_with("chmod")) io.push_back(call);
  }
  const std::string attempt = fs::path(attempt_dir_).filename().string();
  // The checkpoint directory first, made and synced into the job's directory; then the job's
  // fence: its mark, made durable before anything of the attempt; then the files.
  ASSERT_EQ(io.size(), 16u) << ::testing::PrintToString(io);
  EXPECT_EQ(io[0], "syncdir " + fs::path(parentDir(attemptsDir())).filename().string());
  EXPECT_EQ(io[1], "write " + attempt);
  EXPECT_EQ(io[2], "syncdir fence");
  io.erase(io.begin(), io.begin() + 3);
  const std::vector<std::string> files = {std::string(kLaunchFile), std::string(kScriptFile),
                                          std::string(kSubmitFile), "llamafactory.yaml",
                                          std::string(kManifestFile)};
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(io[i], "write " + files[i]);
    EXPECT_EQ(io[i + 5], "sync " + files[i]);
  }
  EXPECT_TRUE(io[10].starts_with("syncdir ") && io[10] != "syncdir " + attempt) << io[10];
  EXPECT_EQ(io[11], "rename to " + attempt);
  EXPECT_EQ(io[12], "syncdir " + fs::path(attemptsDir()).filename().string());
  for (const auto& file : files) {
    EXPECT_EQ(modeOf(attemptFile(attempt_dir_, file)), 0444u) << file;
  }
}

TEST_F(StagerTest, ASharedGroupGetsLogsAndOutputGroupWritableAndSetgid) {
  ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
  const JobAccess access = sharedGroup();
  const std::string gid = std::to_string(access.group->gid);
  RecordingStagingFs recording;
  const mode_t old_umask = ::umask(0077);
  auto staged = stageAttempt(request_, script_, body_, access, recording);
  ::umask(old_umask);
  ASSERT_TRUE(staged) << staged.error().describe();

  // The group is given first, then the mode, so setgid is not dropped; nothing else changes
  // group.
  std::vector<std::string> group_calls;
  for (const auto& call : recording.calls) {
    if (call.starts_with("chgrp") || call.find("2775") != std::string::npos) {
      group_calls.push_back(call);
    }
  }
  EXPECT_EQ(group_calls,
            (std::vector<std::string>{"chgrp " + gid + " checkpoints", "chmod 2775 checkpoints",
                                      "chgrp " + gid + " logs", "chmod 2775 logs",
                                      "chgrp " + gid + " output", "chmod 2775 output"}));
  for (const std::string& dir : {attemptFile(attempt_dir_, kLogsDir),
                                 attemptFile(attempt_dir_, kOutputDir), request_.checkpoint_dir}) {
    EXPECT_EQ(modeOf(dir), 02775u) << dir;
    struct stat st {};
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_gid, access.group->gid) << dir;
  }
  // Everything else stays read-only for all.
  for (auto name : {kLaunchFile, kScriptFile, kSubmitFile, kManifestFile}) {
    EXPECT_EQ(modeOf(attemptFile(attempt_dir_, name)), 0444u) << name;
  }
  EXPECT_EQ(modeOf(attempt_dir_), 0555u);
}

TEST_F(StagerTest, ParentsItCreatesAreTraversableWhateverTheUmask) {
  const mode_t old_umask = ::umask(0077);
  auto staged = stageAttempt(request_, script_, body_, access_, fs_);
  ::umask(old_umask);
  ASSERT_TRUE(staged) << staged.error().describe();
  const std::string job_dir = parentDir(attemptsDir());
  for (const std::string& dir : {parentDir(job_dir), job_dir, attemptsDir()}) {
    EXPECT_EQ(modeOf(dir), 0755u) << dir;
  }
}

TEST_F(StagerTest, AStagingRootTheJobUserCannotReachIsRefusedBeforeAnythingIsMade) {
  ASSERT_EQ(::chmod(root_.c_str(), 0700), 0);  // the job user is "other" here, or in its group
  auto staged = stageAttempt(request_, script_, body_, sharedGroup(), fs_);
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().code, "staging.not_traversable");
  EXPECT_NE(staged.error().message.find("'" + root_ + "'"), std::string::npos)
      << staged.error().message;
  EXPECT_TRUE(entriesOf(root_).empty());
}

TEST_F(StagerTest, AFailedFsyncAfterTheRenameReportsAnErrorButTheAttemptIsComplete) {
  FaultyStagingFs counting(-1);
  ASSERT_TRUE(stageAttempt(request_, script_, body_, access_, counting));
  const int last = counting.calls() - 1;
  fs_.removeTree(root_ + "/jobs");

  FaultyStagingFs faulty(last);
  auto staged = stageAttempt(request_, script_, body_, access_, faulty);
  ASSERT_FALSE(staged);
  EXPECT_EQ(faulty.failedCall(), "syncDir");
  EXPECT_EQ(readFile(attemptFile(attempt_dir_, kScriptFile)), script_);
  EXPECT_TRUE(fs::exists(attemptFile(attempt_dir_, kManifestFile)));
}

// The job's checkpoint directory: made with the first attempt, then never touched, so the next
// attempt finds what the last one saved, with the modes the job gave it.
TEST_F(StagerTest, TheCheckpointDirIsMadeOnceAndLeftAsTheJobLeftIt) {
  const mode_t old_umask = ::umask(0077);
  ASSERT_TRUE(stageAttempt(request_, script_, body_, access_, fs_));
  ::umask(old_umask);
  const std::string checkpoints = request_.checkpoint_dir;
  EXPECT_EQ(checkpoints, parentDir(attemptsDir()) + "/checkpoints");
  EXPECT_EQ(modeOf(checkpoints), 0755u);  // writable by the job user, who is TunePlane's here

  // What attempt 2 saved, as the job left it.
  ASSERT_TRUE(fs::create_directory(checkpoints + "/checkpoint-20"));
  test::writeFile(checkpoints + "/checkpoint-20/trainer_state.json", "{\"global_step\": 20}");
  ASSERT_EQ(::chmod(checkpoints.c_str(), 0700), 0);

  launch::LaunchRequest next = testing::sampleRequest(*attemptDir(root_, "hello-0a1b2c3d", 3));
  ASSERT_EQ(next.checkpoint_dir, checkpoints);
  ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);  // the shared-group job user must get through
  RecordingStagingFs recording;
  ASSERT_TRUE(stageAttempt(next, script_, body_, sharedGroup(), recording));
  EXPECT_EQ(readFile(checkpoints + "/checkpoint-20/trainer_state.json"), "{\"global_step\": 20}");
  EXPECT_EQ(modeOf(checkpoints), 0700u);
  for (const auto& call : recording.calls) {
    EXPECT_EQ(call.find("checkpoints"), std::string::npos) << call;
  }
  EXPECT_EQ(entriesOf(attemptsDir()).size(), 2u);
}

TEST_F(StagerTest, ACheckpointDirThatIsNotADirectoryIsRefusedBeforeTheAttemptIsMade) {
  ASSERT_TRUE(fs_.makeDirs(parentDir(request_.checkpoint_dir), 0755));
  test::writeFile(request_.checkpoint_dir, "not a directory");
  auto staged = stageAttempt(request_, script_, body_, access_, fs_);
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().code, "staging.invalid_checkpoint_dir");
  EXPECT_FALSE(fs::exists(attempt_dir_));
  for (const std::string dir : {"relative/checkpoints", "/shared/../etc", "/"}) {
    request_.checkpoint_dir = dir;
    auto refused = stageAttempt(request_, script_, body_, access_, fs_);
    ASSERT_FALSE(refused) << dir;
    EXPECT_EQ(refused.error().code, "staging.invalid_checkpoint_dir") << dir;
  }
  EXPECT_FALSE(fs::exists(attempt_dir_));
}

TEST_F(StagerTest, AJobWithoutACheckpointDirGetsNone) {
  request_.checkpoint_dir.clear();
  ASSERT_TRUE(stageAttempt(request_, script_, body_, access_, fs_));
  auto beside = entriesOf(parentDir(attemptsDir()));
  std::sort(beside.begin(), beside.end());
  EXPECT_EQ(beside, (std::vector<std::string>{"attempts", "fence"}));  // no checkpoints/
}

// A shared-group grant that fails leaves no checkpoint directory without the job's access:
// the next stage makes it again.
TEST_F(StagerTest, ACheckpointDirWhoseGrantFailedIsMadeAgainByTheNextStage) {
  ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
  int fail_at = -1;
  for (int at = 0; at < 8 && fail_at < 0; ++at) {
    fs_.removeTree(root_ + "/jobs");
    FaultyStagingFs faulty(at);
    (void)stageAttempt(request_, script_, body_, sharedGroup(), faulty);
    if (faulty.failedCall() == "changeGroup") fail_at = at;
  }
  ASSERT_GE(fail_at, 0) << "no changeGroup among the first calls";
  EXPECT_FALSE(fs::exists(request_.checkpoint_dir));
  EXPECT_FALSE(fs::exists(attempt_dir_));
  ASSERT_TRUE(stageAttempt(request_, script_, body_, sharedGroup(), fs_));
  EXPECT_EQ(modeOf(request_.checkpoint_dir), 02775u);
}

TEST_F(StagerTest, InputsWithNamesThatAreNotPlainAreRefused) {
  for (const std::string name : {"", ".hidden", "a/b", "../x", "job.sh", "launch.json",
                                 "manifest.json", "logs", "output", "sub mit", "x\ny"}) {
    request_.inputs = {{name, "content"}};
    auto staged = stageAttempt(request_, script_, body_, access_, fs_);
    ASSERT_FALSE(staged) << name;
    EXPECT_EQ(staged.error().code, "staging.invalid_input") << name;
  }
  request_.inputs = {{"same.yaml", "a"}, {"same.yaml", "b"}};
  auto twice = stageAttempt(request_, script_, body_, access_, fs_);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, "staging.invalid_input");
  EXPECT_FALSE(fs::exists(attempt_dir_));
}

TEST_F(StagerTest, RemoveTreeDeletesReadOnlyTrees) {
  ASSERT_TRUE(stageAttempt(request_, script_, body_, access_, fs_));
  fs_.removeTree(attempt_dir_);
  EXPECT_FALSE(fs::exists(attempt_dir_));
}

}  // namespace
}  // namespace tuneplane::staging
