#include "doctor/staging_checks.h"

#include <fmt/format.h>

namespace tuneplane::doctor {
namespace {

using nlohmann::json;

struct KnownFilesystem {
  uint64_t magic;
  const char* name;
  FilesystemSharing sharing;
};

// statfs f_type values. Shared: filesystems whose point is that many hosts mount the same
// tree. Local: a disk or memory of this host. FUSE is listed as unknown on purpose: GlusterFS
// and ceph-fuse are shared, sshfs or a local FUSE mount are not, and f_type cannot tell.
constexpr KnownFilesystem kFilesystems[] = {
    {0x6969, "nfs", FilesystemSharing::kShared},
    {0x0BD00BD0, "lustre", FilesystemSharing::kShared},
    {0x47504653, "gpfs", FilesystemSharing::kShared},
    {0x19830326, "beegfs", FilesystemSharing::kShared},
    {0x00C36400, "cephfs", FilesystemSharing::kShared},
    {0xAAD7AAEA, "panfs", FilesystemSharing::kShared},
    {0x517B, "smb", FilesystemSharing::kShared},
    {0xFF534D42, "cifs", FilesystemSharing::kShared},
    {0xFE534D42, "smb2", FilesystemSharing::kShared},
    {0x01021997, "9p", FilesystemSharing::kShared},
    {0x5346414F, "afs", FilesystemSharing::kShared},
    {0x6B414653, "afs", FilesystemSharing::kShared},
    {0x7461636F, "ocfs2", FilesystemSharing::kShared},
    {0x01161970, "gfs2", FilesystemSharing::kShared},
    {0xEF53, "ext2/3/4", FilesystemSharing::kLocal},
    {0x58465342, "xfs", FilesystemSharing::kLocal},
    {0x9123683E, "btrfs", FilesystemSharing::kLocal},
    {0x2FC12FC1, "zfs", FilesystemSharing::kLocal},
    {0xF2F52010, "f2fs", FilesystemSharing::kLocal},
    {0x01021994, "tmpfs", FilesystemSharing::kLocal},
    {0x858458F6, "ramfs", FilesystemSharing::kLocal},
    {0x794C7630, "overlayfs", FilesystemSharing::kLocal},
    {0x73717368, "squashfs", FilesystemSharing::kLocal},
    {0x4D44, "vfat", FilesystemSharing::kLocal},
    {0x2011BAB0, "exfat", FilesystemSharing::kLocal},
    {0x65735546, "fuse", FilesystemSharing::kUnknown},
};

std::string userLabel(const staging::OsUser& u) {
  return fmt::format("{} (uid {})", u.name.empty() ? "?" : u.name, u.uid);
}

json userJson(const staging::OsUser& u) {
  return {{"name", u.name}, {"uid", u.uid}, {"gid", u.gid}};
}

}  // namespace

FilesystemKind classifyFilesystem(uint64_t f_type) {
  // f_type is a signed word on some ABIs: compare the low 32 bits, where every magic lives.
  const uint64_t magic = f_type & 0xFFFFFFFFu;
  for (const auto& fs : kFilesystems)
    if (fs.magic == magic) return {fs.name, fs.sharing};
  return {"unknown", FilesystemSharing::kUnknown};
}

CheckResult checkStagingRoot(const StagingFacts& f) {
  const std::string name = "staging/root";
  json details = {{"path", f.root}, {"process_user", userJson(f.process_user)}};
  const std::string create_fix = fmt::format(
      "create it on the filesystem the compute nodes share and give it to the job user: "
      "`mkdir -p {0} && chown {1} {0}`",
      f.root, f.job_user_name);
  if (!f.root_info.error.empty()) {
    return failCheck(
        name, fmt::format("cannot inspect staging_root {}: {}", f.root, f.root_info.error),
        "make every directory above it searchable by the user TunePlane runs as", details);
  }
  if (!f.root_info.exists) {
    return failCheck(name, fmt::format("staging_root {} does not exist", f.root), create_fix,
                     details);
  }
  if (!f.root_info.is_directory) {
    return failCheck(name, fmt::format("staging_root {} is not a directory", f.root),
                     "point staging_root at a directory", details);
  }
  if (!f.probe) {
    return skipCheck(name, "the probe file was not written");
  }
  if (!*f.probe) {
    details["probe_error"] = f.probe->error().message;
    return failCheck(name,
                     fmt::format("{} cannot create and remove a file in staging_root {}: {}",
                                 userLabel(f.process_user), f.root, f.probe->error().message),
                     fmt::format("let the user TunePlane runs as write there (`chown {} {}`), "
                                 "and check that the filesystem is not mounted read-only",
                                 f.job_user_name, f.root),
                     details);
  }
  return okCheck(
      name,
      fmt::format("staging_root {} exists, and {} created and removed a probe file in it", f.root,
                  userLabel(f.process_user)),
      details);
}

CheckResult checkStagingUser(const StagingFacts& f) {
  const std::string name = "staging/user";
  json details = {{"process_user", userJson(f.process_user)}, {"job_user", f.job_user_name}};
  if (f.group_name) details["staging_group"] = *f.group_name;
  if (!f.access) return skipCheck(name, "the job user's access was not asked");
  if (!*f.access) {
    // The rule is staging's (staging::decideJobAccess): its refusal is the reason and the fix,
    // the same words a submit refuses with.
    const staging::AccessRefusal& refusal = f.access->error();
    details["code"] = refusal.code;
    details["field"] = refusal.field;
    return failCheck(
        name, fmt::format("{} [{}]", refusal.reason, refusal.code),
        refusal.fix.empty() ? "correct " + refusal.field + " in the site file" : refusal.fix,
        details);
  }
  const staging::JobAccess& access = **f.access;
  details["job_user"] = userJson(access.job_user);
  details["writable_dir_mode"] = fmt::format("{:04o}", access.writableDirMode());
  if (access.mode == staging::JobAccessMode::kSharedGroup && access.group) {
    details["mode"] = "shared_group";
    return okCheck(
        name,
        fmt::format("TunePlane runs as {} and jobs as {}; staging.group '{}' (gid {}) "
                    "holds the job user and TunePlane can give it logs/ and output/ "
                    "({}), and the job user can pass through every directory down to "
                    "{}",
                    userLabel(access.process_user), userLabel(access.job_user), access.group->name,
                    access.group->gid, details["writable_dir_mode"].get<std::string>(), f.root),
        details);
  }
  if (access.mode == staging::JobAccessMode::kPerUser) {
    details["mode"] = "per_user";
    return okCheck(name,
                   fmt::format("slurm.identity per_user: TunePlane runs as {}, slurm.user, and "
                               "each job runs as its own user, its files under {}/users/<name> "
                               "(one staging/user/<name> check per mapped user)",
                               userLabel(access.process_user), f.root),
                   details);
  }
  details["mode"] = "same_user";
  return okCheck(name,
                 fmt::format("TunePlane runs as {}, the user Slurm runs jobs as (slurm.user): "
                             "jobs can write their attempt's logs/ and output/",
                             userLabel(access.process_user)),
                 details);
}

CheckResult checkUserStaging(const UserStagingFacts& u, const StagingFacts& f) {
  const std::string name = "staging/user/" + u.name;
  json details = {{"user", u.name}, {"root", f.root}};
  if (!u.access) return skipCheck(name, "the site's own rule failed (see staging/user)");
  if (!*u.access) {
    const staging::AccessRefusal& refusal = u.access->error();
    details["code"] = refusal.code;
    return failCheck(name, fmt::format("{} [{}]", refusal.reason, refusal.code),
                     refusal.fix.empty() ? "map the API user to another Unix user" : refusal.fix,
                     details);
  }
  const staging::JobAccess& access = **u.access;
  details["job_user"] = userJson(access.job_user);
  if (access.group) details["group"] = access.group->name;
  details["user_dir_mode"] = fmt::format("{:04o}", staging::kUserDirMode);
  if (u.slurm && !*u.slurm) {
    details["slurm_code"] = u.slurm->error().code;
    return failCheck(name, u.slurm->error().message,
                     fmt::format("make '{}' known to Slurm with an association for the accounts "
                                 "its jobs are charged to (sacctmgr add user {} account=…)",
                                 u.name, u.name),
                     details);
  }
  details["slurm"] = u.slurm ? "known" : "not checked";
  return okCheck(
      name,
      fmt::format("{}'s jobs run as {}; {}/users/{} is owned by {}, group '{}', mode "
                  "{:04o}, and only they and TunePlane reach it{}",
                  u.name, userLabel(access.job_user), f.root, u.name,
                  userLabel(access.process_user), access.group ? access.group->name : "?",
                  staging::kUserDirMode, u.slurm ? "; Slurm knows the user" : ""),
      details);
}

CheckResult checkStagingFilesystem(const StagingFacts& f) {
  const std::string name = "staging/filesystem";
  if (!f.root_info.exists || !f.root_info.is_directory) {
    return skipCheck(name, "staging_root is not a directory (see staging/root)");
  }
  if (!f.fs_type) return skipCheck(name, "statfs was not called");
  json details = {{"path", f.root}, {"method", "statfs(2) f_type"}};
  if (!*f.fs_type) {
    return warnCheck(name,
                     fmt::format("cannot tell which filesystem {} is on: statfs failed: {}", f.root,
                                 f.fs_type->error().message),
                     "make sure staging_root is on the filesystem the compute nodes share",
                     details);
  }
  const uint64_t magic = **f.fs_type;
  const FilesystemKind kind = classifyFilesystem(magic);
  const std::string on = fmt::format("{} is on {} (statfs f_type {:#x})", f.root, kind.name, magic);
  details["f_type"] = fmt::format("{:#x}", magic);
  details["filesystem"] = kind.name;
  const std::string same_path =
      "make sure every compute node mounts it at the same path (doctor cannot see the nodes' "
      "mounts from here)";
  switch (kind.sharing) {
    case FilesystemSharing::kShared:
      details["sharing"] = "shared";
      return okCheck(name, on + ", a network filesystem the compute nodes can share; " + same_path,
                     details);
    case FilesystemSharing::kLocal:
      details["sharing"] = "local";
      return warnCheck(name,
                       on + ", a local filesystem: compute nodes see their own disks, not this "
                            "one, so jobs would not find their attempt directories (unless the "
                            "only node is this host)",
                       "put staging_root on the filesystem the compute nodes share (NFS, Lustre, "
                       "GPFS, BeeGFS, CephFS, …), mounted at the same path on every node",
                       details);
    case FilesystemSharing::kUnknown:
      break;
  }
  details["sharing"] = "unknown";
  return warnCheck(name,
                   on + (kind.name == "fuse" ? ", a FUSE filesystem: it may be shared (GlusterFS, "
                                               "ceph-fuse, …) or not"
                                             : ", a filesystem doctor does not know"),
                   "make sure staging_root is on a filesystem every compute node mounts at the "
                   "same path",
                   details);
}

}  // namespace tuneplane::doctor
