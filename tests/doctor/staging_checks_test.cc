// The staging root, the job user rule of issue 11 (staging's verdict, as doctor reports it)
// and the filesystem type, from tables.
#include "doctor/staging_checks.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../catalog/temp_dir.h"
#include "../staging/fake_os_users.h"
#include "fixtures.h"

namespace tuneplane::doctor {
namespace {

using testing::contains;

constexpr uint64_t kNfs = 0x6969;
constexpr uint64_t kExt4 = 0xEF53;

constexpr uid_t kTpUser = 1001;
constexpr gid_t kStageGroup = 2000;
constexpr uid_t kService = 2001;

staging::OsUser user(std::string name, uid_t uid) {
  return staging::OsUser{std::move(name), uid, uid};
}

// tpuser (in tpstage), root and a service account svc (in no shared group); the process is
// tpuser unless a row says otherwise.
staging::testing::FakeOsUsers database() {
  staging::testing::FakeOsUsers users;
  users.user("root", 0, 0)
      .user("tpuser", kTpUser, kTpUser, {kStageGroup})
      .user("svc", kService, kService)
      .group("tpstage", kStageGroup)
      .group("other", 3000)
      .process(kTpUser, {kTpUser, kStageGroup});
  return users;
}

// A healthy root on NFS; TunePlane runs as the job user.
StagingFacts healthy() {
  StagingFacts f;
  f.root = "/shared/attempts";
  f.root_info = {true, true, ""};
  f.probe = ok();
  f.fs_type = kNfs;
  f.process_user = user("tpuser", kTpUser);
  f.job_user_name = "tpuser";
  staging::JobAccess same;
  same.job_user = f.process_user;
  same.process_user = f.process_user;
  f.access = same;
  return f;
}

TEST(StagingChecksTest, ClassifiesFilesystemMagicNumbers) {
  struct StagingRow {
    uint64_t magic;
    const char* name;
    FilesystemSharing sharing;
  };
  const StagingRow rows[] = {
      {0x6969, "nfs", FilesystemSharing::kShared},
      {0x0BD00BD0, "lustre", FilesystemSharing::kShared},
      {0x47504653, "gpfs", FilesystemSharing::kShared},
      {0x19830326, "beegfs", FilesystemSharing::kShared},
      {0x00C36400, "cephfs", FilesystemSharing::kShared},
      {0xFF534D42, "cifs", FilesystemSharing::kShared},
      {0xEF53, "ext2/3/4", FilesystemSharing::kLocal},
      {0x58465342, "xfs", FilesystemSharing::kLocal},
      {0x01021994, "tmpfs", FilesystemSharing::kLocal},
      {0x794C7630, "overlayfs", FilesystemSharing::kLocal},
      {0x65735546, "fuse", FilesystemSharing::kUnknown},
      {0x12345678, "unknown", FilesystemSharing::kUnknown},
      // A sign-extended f_type (a signed long on some ABIs) is the same filesystem.
      {0xFFFFFFFFFF534D42ull, "cifs", FilesystemSharing::kShared},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const FilesystemKind kind = classifyFilesystem(row.magic);
    EXPECT_EQ(kind.name, row.name);
    EXPECT_EQ(kind.sharing, row.sharing);
  }
}

using StagingRow = testing::CheckRow<StagingFacts>;

TEST(StagingChecksTest, Root) {
  StagingFacts missing = healthy();
  missing.root_info = {};
  missing.probe.reset();
  StagingFacts file = healthy();
  file.root_info = {true, false, ""};
  StagingFacts denied = healthy();
  denied.probe = fail("doctor.probe_failed", "",
                      "cannot create a file in /shared/attempts: Permission denied");
  StagingFacts unsearchable = healthy();
  unsearchable.root_info = {false, false, "Permission denied"};
  testing::expectCheckRows<StagingFacts>(
      {
          {"healthy", healthy(), CheckStatus::kOk,
           "exists, and tpuser (uid 1001) created and removed a probe file", ""},
          {"missing", missing, CheckStatus::kFail, "does not exist",
           "mkdir -p /shared/attempts && chown tpuser /shared/attempts"},
          {"a file", file, CheckStatus::kFail, "is not a directory", "directory"},
          {"not writable", denied, CheckStatus::kFail, "Permission denied",
           "chown tpuser /shared/attempts"},
          {"cannot stat", unsearchable, CheckStatus::kFail, "cannot inspect", "searchable"},
      },
      checkStagingRoot);
}

// staging/user reports staging::decideJobAccess: each verdict of the rule, with the reason
// and the fix staging gives, and the code.
TEST(StagingChecksTest, JobUserRuleOfIssue11IsStagingsVerdict) {
  tuneplane::testing::TempDir dir;
  const std::string closed = dir.file("closed");  // root's 0700: tpuser cannot pass
  ASSERT_EQ(::mkdir(closed.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(closed.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  struct Case {
    const char* name;
    std::string job_user;
    std::optional<std::string> group;
    uid_t process;
    std::vector<gid_t> process_groups;
    std::string root;
    CheckStatus status;
    std::string says;
    std::string fix;
  };
  const Case rows[] = {
      {"same user",
       "tpuser",
       {},
       kTpUser,
       {kTpUser},
       "/shared/attempts",
       CheckStatus::kOk,
       "TunePlane runs as tpuser (uid 1001), the user Slurm runs jobs as",
       ""},
      {"root stages for tpuser",
       "tpuser",
       {},
       0,
       {0},
       "/shared/attempts",
       CheckStatus::kFail,
       "TunePlane runs as 'root' (uid 0) but Slurm runs this site's jobs as slurm.user 'tpuser' "
       "(uid 1001)",
       "run TunePlane as 'tpuser' (e.g. `sudo -u tpuser tuneplane …`"},
      {"job user unknown here",
       "ghost",
       {},
       kTpUser,
       {kTpUser},
       "/shared/attempts",
       CheckStatus::kFail,
       "slurm.user 'ghost' (the user Slurm runs jobs as) is not a user on "
       "this host",
       "same uid"},
      {"shared group",
       "tpuser",
       "tpstage",
       0,
       {0},
       "/shared/attempts",
       CheckStatus::kOk,
       "staging.group 'tpstage' (gid 2000) holds the job user",
       ""},
      {"group missing",
       "tpuser",
       "nosuch",
       0,
       {0},
       "/shared/attempts",
       CheckStatus::kFail,
       "staging.group 'nosuch' is not a group on this host [staging.unknown_group]",
       "create it (with 'tpuser' in it"},
      {"job user outside the group",
       "tpuser",
       "other",
       0,
       {0},
       "/shared/attempts",
       CheckStatus::kFail,
       "is not in staging.group 'other'",
       "add 'tpuser' to 'other'"},
      {"service account outside the group",
       "tpuser",
       "tpstage",
       kService,
       {kService},
       "/shared/attempts",
       CheckStatus::kFail,
       "'svc' (uid 2001), which is neither root nor in staging.group 'tpstage'",
       "add 'svc' to 'tpstage' (and restart TunePlane)"},
      {"a directory the job user cannot pass",
       "tpuser",
       "tpstage",
       0,
       {0},
       closed + "/attempts",
       CheckStatus::kFail,
       "cannot pass through '" + closed + "' (mode 0700",
       "chmod o+x"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    catalog::SiteConfig site = testing::site();
    site.slurm.user = row.job_user;
    site.staging.group = row.group;
    site.staging_root = row.root;
    auto users = database().process(row.process, row.process_groups);
    staging::PosixStagingFs fs;
    StagingFacts facts = healthy();
    facts.root = row.root;
    facts.job_user_name = row.job_user;
    facts.group_name = row.group;
    facts.access = staging::decideJobAccess(site, users, fs);
    const CheckResult r = checkStagingUser(facts);
    EXPECT_EQ(toString(r.status), std::string(toString(row.status))) << r.message;
    EXPECT_TRUE(contains(r.message, row.says)) << r.message;
    EXPECT_TRUE(contains(r.fix, row.fix)) << r.fix;
    if (row.status == CheckStatus::kFail) {
      // The reason and the fix are staging's, apart; the code is in the message and details.
      EXPECT_EQ(r.details["code"], facts.access->error().code);
      EXPECT_TRUE(contains(r.message, "[" + facts.access->error().code + "]")) << r.message;
      EXPECT_FALSE(contains(r.message, row.fix)) << r.message;
    }
  }
}

TEST(StagingChecksTest, ALookupThatFailedIsReportedWithAFix) {
  auto users = database().failLookups();
  staging::PosixStagingFs fs;
  StagingFacts facts = healthy();
  facts.access = staging::decideJobAccess(testing::site(), users, fs);
  const CheckResult r = checkStagingUser(facts);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_TRUE(contains(r.message, "the server did not answer")) << r.message;
  EXPECT_TRUE(contains(r.fix, "getent passwd")) << r.fix;
}

TEST(StagingChecksTest, Filesystem) {
  StagingFacts local = healthy();
  local.fs_type = kExt4;
  StagingFacts fuse = healthy();
  fuse.fs_type = 0x65735546;
  StagingFacts odd = healthy();
  odd.fs_type = 0x12345678;
  StagingFacts statfs_failed = healthy();
  statfs_failed.fs_type = fail("doctor.probe_failed", "", "cannot statfs: Input/output error");
  StagingFacts missing = healthy();
  missing.root_info = {};
  testing::expectCheckRows<StagingFacts>(
      {
          {"nfs", healthy(), CheckStatus::kOk,
           "/shared/attempts is on nfs (statfs f_type 0x6969), a network filesystem", ""},
          {"ext4", local, CheckStatus::kWarn, "ext2/3/4 (statfs f_type 0xef53), a local",
           "NFS, Lustre, GPFS, BeeGFS, CephFS"},
          {"fuse", fuse, CheckStatus::kWarn, "a FUSE filesystem", "same path"},
          {"unknown", odd, CheckStatus::kWarn, "does not know", "same path"},
          {"statfs failed", statfs_failed, CheckStatus::kWarn, "Input/output error", "nodes share"},
          {"no root", missing, CheckStatus::kSkip, "see staging/root", ""},
      },
      checkStagingFilesystem);
}

TEST(StagingChecksTest, FilesystemDetailsSayHowItChecked) {
  const CheckResult r = checkStagingFilesystem(healthy());
  EXPECT_EQ(r.details["method"], "statfs(2) f_type");
  EXPECT_EQ(r.details["f_type"], "0x6969");
  EXPECT_EQ(r.details["sharing"], "shared");
}

}  // namespace
}  // namespace tuneplane::doctor
