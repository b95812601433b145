// Doctor's credential judgement from a table: one row per exposure (inside the staging root,
// under a mount source, on the staging filesystem, on a network filesystem, group- or
// world-readable, another owner, a signing key on a node), each failing with its own fix;
// accepted exposures warn; a clean file passes.
#include "doctor/credential_checks.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace tuneplane::doctor {
namespace {

using testing::CheckRow;
using testing::expectCheckRows;

constexpr uint64_t kNfs = 0x6969;
constexpr uint64_t kExt4 = 0xEF53;
constexpr uint64_t kLustre = 0x0BD00BD0;
constexpr uint64_t kFuse = 0x65735546;

// /etc/tuneplane/jwt.key, tpuser's alone (0600) on a local disk; the staging root is on
// another device (NFS); /shared/datasets is mounted into every job.
CredentialFacts clean() {
  CredentialFacts f;
  f.field = "slurm.jwt_key_file";
  f.path = "/etc/tuneplane/jwt.key";
  f.kind = CredentialKind::kSigningKey;
  f.file = FileInfo{true, "", "/etc/tuneplane/jwt.key", 1001, 1001, 0600, 1};
  f.fs_type = kExt4;
  f.serve_user = {"tpuser", 1001, 1001};
  f.job_user = "tpuser";
  f.staging_root = "/shared/tuneplane/attempts";
  f.staging_device = 2;
  f.staging_fs_type = kNfs;
  f.mount_sources = {{"mounts[0].source", "/shared/datasets"}};
  return f;
}

CredentialFacts with(const std::function<void(CredentialFacts&)>& change) {
  CredentialFacts f = clean();
  change(f);
  return f;
}

TEST(CredentialChecksTest, EachExposureFailsWithItsFix) {
  const std::vector<CheckRow<CredentialFacts>> rows = {
      {"clean", clean(), CheckStatus::kOk, "tpuser's alone (mode 0600)", ""},
      {"inside the staging root", with([](auto& f) {
         f.file.canonical = "/shared/tuneplane/attempts/secrets/jwt.key";
         f.file.device = 2;
         f.fs_type = kNfs;
       }),
       CheckStatus::kFail, "inside staging_root /shared/tuneplane/attempts",
       "install -m 0600 -o tpuser /etc/tuneplane/jwt.key /etc/tuneplane/"},
      {"under a mount source",
       with([](auto& f) { f.file.canonical = "/shared/datasets/.keys/jwt.key"; }),
       CheckStatus::kFail, "under mounts[0].source (/shared/datasets), which is bound into every",
       "point slurm.jwt_key_file there"},
      {"on the staging filesystem (FUSE: not known to be local)", with([](auto& f) {
         f.file.canonical = "/shared/tuneplane/secrets/jwt.key";
         f.file.device = 2;
         f.staging_fs_type = kFuse;
         f.fs_type = kFuse;
       }),
       CheckStatus::kFail, "on the staging filesystem", "local filesystem of serve's host"},
      {"on NFS, by statfs type", with([](auto& f) { f.fs_type = kNfs; }), CheckStatus::kFail,
       "network filesystem (nfs, statfs f_type 0x6969)", "local filesystem of serve's host"},
      {"on Lustre, by statfs type", with([](auto& f) { f.fs_type = kLustre; }), CheckStatus::kFail,
       "network filesystem (lustre", "no job reaches"},
      {"group-readable", with([](auto& f) { f.file.mode = 0640; }), CheckStatus::kFail,
       "mode 0640 gives its group or others access", "chmod 0600 /etc/tuneplane/jwt.key"},
      {"world-readable", with([](auto& f) { f.file.mode = 0644; }), CheckStatus::kFail, "mode 0644",
       "chmod 0600"},
      {"another owner", with([](auto& f) { f.file.uid = 0; }), CheckStatus::kFail,
       "belongs to uid 0, not to tpuser (uid 1001)", "chown tpuser /etc/tuneplane/jwt.key"},
      {"a signing key on a host that is also a node", with([](auto& f) { f.host_node = "cpu1"; }),
       CheckStatus::kFail, "this host is also compute node cpu1", "scontrol token username=tpuser"},
      // Issue 45: the rule covers every secret a job must not read, not the key alone.
      {"a TLS key on a host that is also a node", with([](auto& f) {
         f.kind = CredentialKind::kSecret;
         f.field = "server.tls.key";
         f.host_node = "cpu1";
       }),
       CheckStatus::kFail, "this host is also compute node cpu1",
       "run serve on a host that is not a compute node"},
      {"a database password file on a host that is also a node", with([](auto& f) {
         f.kind = CredentialKind::kSecret;
         f.field = "server.db_password_file";
         f.host_node = "cpu1";
       }),
       CheckStatus::kFail, "the file belongs to tpuser, the user every job runs as",
       "owning server.db_password_file"},
      {"a client key on a host that is also a node", with([](auto& f) {
         f.kind = CredentialKind::kSecret;
         f.field = "slurm.client_key";
         f.host_node = "cpu1";
       }),
       CheckStatus::kFail, "this host is also compute node cpu1", "staging.group"},
      {"a token on a node is its user's anyway", with([](auto& f) {
         f.kind = CredentialKind::kToken;
         f.field = "slurm.token_file";
         f.host_node = "cpu1";
       }),
       CheckStatus::kOk, "out of the jobs' reach", ""},
      {"a local staging filesystem is not the jobs' reach from here", with([](auto& f) {
         f.staging_device = 1;
         f.staging_fs_type = kExt4;
       }),
       CheckStatus::kOk, "out of the jobs' reach", ""},
      {"accepted: a warning, still with the fix", with([](auto& f) {
         f.fs_type = kNfs;
         f.accepted = true;
       }),
       CheckStatus::kWarn, "accepted: slurm.accept_exposed_credentials is true",
       "local filesystem of serve's host"},
      {"missing: the token check reports it", with([](auto& f) { f.file.exists = false; }),
       CheckStatus::kSkip, "does not exist", ""},
  };
  expectCheckRows(rows, checkCredential);
}

TEST(CredentialChecksTest, EveryFindingIsListedAtOnceAndNamedInDetails) {
  const CheckResult r = checkCredential(with([](auto& f) {
    f.fs_type = kNfs;
    f.file.mode = 0644;
    f.file.uid = 0;
  }));
  EXPECT_EQ(r.name, "credential/slurm.jwt_key_file");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.details["exposures"].size(), 3u) << r.details.dump();
  EXPECT_TRUE(testing::contains(r.fix, "chmod 0600")) << r.fix;
  EXPECT_TRUE(testing::contains(r.fix, "chown tpuser")) << r.fix;
  EXPECT_TRUE(testing::contains(r.fix, "accept_exposed_credentials")) << r.fix;
  EXPECT_TRUE(testing::contains(r.message, "mints a token for any Slurm user")) << r.message;
}

TEST(CredentialChecksTest, ADirectoryNamedLikeTheStagingRootIsNotInsideIt) {
  const auto exposures = credentialExposures(with([](auto& f) {
    f.file.canonical = "/shared/tuneplane/attempts-keys/jwt.key";  // a sibling, not a child
  }));
  EXPECT_TRUE(exposures.empty()) << exposures.front().what;
}

}  // namespace
}  // namespace tuneplane::doctor
