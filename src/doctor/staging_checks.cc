#include "doctor/staging_checks.h"

#include <algorithm>

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

std::string userLabel(const UserInfo& u) {
  return fmt::format("{} (uid {})", u.name.empty() ? "?" : u.name, u.uid);
}

bool inGroup(const UserInfo& u, uint32_t gid) {
  return u.gid == gid || std::find(u.groups.begin(), u.groups.end(), gid) != u.groups.end();
}

json userJson(const UserInfo& u) {
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
  if (f.job_user) details["job_user"] = userJson(*f.job_user);
  if (f.group_name) details["staging_group"] = *f.group_name;
  if (!f.job_user) {
    return failCheck(name,
                     fmt::format("slurm.user '{}' (the user Slurm runs jobs as) does not exist on "
                                 "this host",
                                 f.job_user_name),
                     fmt::format("create '{}' here with the same uid as on the compute nodes (or "
                                 "join this host to the site's directory service), and run "
                                 "TunePlane as '{}'",
                                 f.job_user_name, f.job_user_name),
                     details);
  }
  const UserInfo& job = *f.job_user;
  const UserInfo& me = f.process_user;
  if (f.group_name) {
    // The shared-group rule of issue 11: logs/ and output/ are created group-owned,
    // group-writable and setgid, so the job user may be another user of the same group.
    if (!f.group) {
      return failCheck(name,
                       fmt::format("staging.group '{}' does not exist on this host", *f.group_name),
                       fmt::format("create group '{}' with both {} and {} in it, or remove "
                                   "staging.group and run TunePlane as '{}'",
                                   *f.group_name, me.name, job.name, job.name),
                       details);
    }
    std::vector<std::string> outside;
    // Root may give files to any group (the stager does: staging/job_access.h).
    if (me.uid != 0 && !inGroup(me, f.group->gid)) {
      outside.push_back(userLabel(me) + ", who runs TunePlane");
    }
    if (!inGroup(job, f.group->gid)) outside.push_back(userLabel(job) + ", who runs the jobs");
    if (!outside.empty()) {
      return failCheck(name,
                       fmt::format("staging.group '{}' (gid {}) must hold both users, but it "
                                   "does not hold {}",
                                   f.group->name, f.group->gid, fmt::join(outside, "; nor ")),
                       fmt::format("add both users to group '{}' (on this host and on the nodes)",
                                   f.group->name),
                       details);
    }
    return okCheck(
        name,
        fmt::format("TunePlane runs as {} and jobs as {}; both are in staging.group '{}', "
                    "so jobs can write their attempt's logs/ and output/",
                    userLabel(me), userLabel(job), f.group->name),
        details);
  }
  if (me.uid == job.uid) {
    return okCheck(name,
                   fmt::format("TunePlane runs as {}, the user Slurm runs jobs as (slurm.user): "
                               "jobs can write their attempt's logs/ and output/",
                               userLabel(me)),
                   details);
  }
  return failCheck(name,
                   fmt::format("TunePlane runs as {} but Slurm runs jobs as {} (slurm.user): a job "
                               "could not write its log into the attempt's logs/, which this "
                               "process creates",
                               userLabel(me), userLabel(job)),
                   fmt::format("run TunePlane as '{}' (e.g. `sudo -u {} tuneplane …`, or User={} "
                               "in its systemd unit), or name a group both users share as "
                               "staging.group in the site file",
                               job.name, job.name, job.name),
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
