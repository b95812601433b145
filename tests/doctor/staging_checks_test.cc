// The staging root, the job user rule of issue 11 and the filesystem type, from tables.
#include "doctor/staging_checks.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace tuneplane::doctor {
namespace {

using testing::contains;

constexpr uint64_t kNfs = 0x6969;
constexpr uint64_t kExt4 = 0xEF53;

UserInfo user(std::string name, uint32_t uid, std::vector<uint32_t> groups = {}) {
  return UserInfo{std::move(name), uid, uid, std::move(groups)};
}

// A healthy root on NFS; TunePlane runs as the job user.
StagingFacts healthy() {
  StagingFacts f;
  f.root = "/shared/attempts";
  f.root_info = {true, true, ""};
  f.probe = ok();
  f.fs_type = kNfs;
  f.process_user = user("tpuser", 1001);
  f.job_user_name = "tpuser";
  f.job_user = user("tpuser", 1001);
  return f;
}

TEST(StagingChecksTest, ClassifiesFilesystemMagicNumbers) {
  struct Row {
    uint64_t magic;
    const char* name;
    FilesystemSharing sharing;
  };
  const Row rows[] = {
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

struct Row {
  const char* name;
  StagingFacts facts;
  CheckStatus status;
  const char* says;
  const char* fix;
};

template <typename Check>
void expectRows(const std::vector<Row>& rows, Check check) {
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const CheckResult r = check(row.facts);
    EXPECT_EQ(toString(r.status), std::string(toString(row.status))) << r.message;
    EXPECT_TRUE(contains(r.message, row.says)) << r.message;
    EXPECT_TRUE(contains(r.fix, row.fix)) << r.fix;
  }
}

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
  expectRows(
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

TEST(StagingChecksTest, JobUserRuleOfIssue11) {
  StagingFacts root = healthy();
  root.process_user = user("root", 0);
  StagingFacts unknown_user = healthy();
  unknown_user.job_user.reset();
  StagingFacts group_ok = root;
  group_ok.group_name = "tpstage";
  group_ok.group = GroupInfo{"tpstage", 2000};
  group_ok.process_user.groups = {0, 2000};
  group_ok.job_user->groups = {1001, 2000};
  StagingFacts group_missing = group_ok;
  group_missing.group.reset();
  StagingFacts job_user_outside = group_ok;
  job_user_outside.job_user->groups = {1001};
  StagingFacts root_outside = group_ok;  // root gives files to any group
  root_outside.process_user.groups = {0};
  StagingFacts service_outside = group_ok;
  service_outside.process_user = user("svc", 2001);
  service_outside.process_user.groups = {2001};
  expectRows(
      {
          {"same user", healthy(), CheckStatus::kOk, "TunePlane runs as tpuser (uid 1001)", ""},
          {"root stages for tpuser", root, CheckStatus::kFail,
           "TunePlane runs as root (uid 0) but Slurm runs jobs as tpuser (uid 1001)",
           "run TunePlane as 'tpuser'"},
          {"job user unknown here", unknown_user, CheckStatus::kFail,
           "slurm.user 'tpuser' (the user Slurm runs jobs as) does not exist on this host",
           "same uid"},
          {"shared group", group_ok, CheckStatus::kOk, "both are in staging.group 'tpstage'", ""},
          {"group missing", group_missing, CheckStatus::kFail,
           "staging.group 'tpstage' does not exist", "create group 'tpstage'"},
          {"job user outside the group", job_user_outside, CheckStatus::kFail,
           "does not hold tpuser (uid 1001), who runs the jobs", "add both users"},
          {"root outside the group", root_outside, CheckStatus::kOk,
           "both are in staging.group 'tpstage'", ""},
          {"service account outside the group", service_outside, CheckStatus::kFail,
           "does not hold svc (uid 2001), who runs TunePlane", "add both users"},
      },
      checkStagingUser);
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
  expectRows(
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
