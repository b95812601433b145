// See credential_checks.h.
#include "doctor/credential_checks.h"

#include <fmt/format.h>

#include "doctor/staging_checks.h"

namespace tuneplane::doctor {
namespace {

using nlohmann::json;

// `path` is `dir` or below it (both canonical).
bool isUnder(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string kindWords(CredentialKind kind) {
  switch (kind) {
    case CredentialKind::kSigningKey:
      return "the JWT signing key (it mints a token for any Slurm user, SlurmUser included)";
    case CredentialKind::kToken:
      return "the slurmrestd token";
    case CredentialKind::kSecret:
      break;
  }
  return "a secret";
}

std::string moveFix(const CredentialFacts& f) {
  return fmt::format(
      "keep it on a local filesystem of serve's host that no job reaches, e.g. "
      "`install -m 0600 -o {0} {1} /etc/tuneplane/` and point {2} there",
      f.serve_user.name.empty() ? "<serve's user>" : f.serve_user.name, f.path, f.field);
}

}  // namespace

std::vector<Exposure> credentialExposures(const CredentialFacts& f) {
  std::vector<Exposure> out;
  if (!f.file.exists) return out;
  const std::string& path = f.file.canonical;
  if (isUnder(path, f.staging_root)) {
    out.push_back({fmt::format("it is inside staging_root {}, which every job reads and writes",
                               f.staging_root),
                   moveFix(f)});
  }
  for (const auto& [field, source] : f.mount_sources) {
    if (isUnder(path, source)) {
      out.push_back({fmt::format("it is under {} ({}), which is bound into every job's container",
                                 field, source),
                     moveFix(f)});
    }
  }
  const auto local = [](const std::optional<Result<uint64_t>>& type) {
    return type && *type && classifyFilesystem(**type).sharing == FilesystemSharing::kLocal;
  };
  std::optional<FilesystemKind> network;
  if (f.fs_type && *f.fs_type) {
    const FilesystemKind kind = classifyFilesystem(**f.fs_type);
    if (kind.sharing == FilesystemSharing::kShared) network = kind;
  }
  if (f.staging_device && *f.staging_device == f.file.device && !local(f.staging_fs_type) &&
      !isUnder(path, f.staging_root)) {
    out.push_back(
        {"it is on the staging filesystem (the same device as staging_root), which the compute "
         "nodes mount",
         moveFix(f)});
  } else if (network) {
    out.push_back({fmt::format("it is on a network filesystem ({}, statfs f_type {:#x}): other "
                               "hosts, the compute nodes among them, may mount it",
                               network->name, **f.fs_type),
                   moveFix(f)});
  }
  if ((f.file.mode & 077) != 0) {
    out.push_back({fmt::format("its mode {:04o} gives its group or others access", f.file.mode),
                   fmt::format("`chmod 0600 {}`", path)});
  }
  if (f.file.uid != f.serve_user.uid) {
    out.push_back({fmt::format("it belongs to uid {}, not to {} (uid {}), the user serve runs as",
                               f.file.uid, f.serve_user.name, f.serve_user.uid),
                   fmt::format("`chown {} {}`", f.serve_user.name, path)});
  }
  // Every kind of credential but the jobs' own slurmrestd token, not the signing key alone: a
  // job placed on this host runs as the user that owns the file, so it reads the TLS key,
  // the client key or the database password as easily as the key (issue 45). A token for
  // the user the jobs run as gives such a job nothing it does not have.
  if (f.host_node && f.serve_user.name == f.job_user && f.kind != CredentialKind::kToken) {
    const std::string what = fmt::format(
        "this host is also compute node {} and the file belongs to {}, the user "
        "every job runs as: a job placed here can read it",
        *f.host_node, f.job_user);
    if (f.kind == CredentialKind::kSigningKey) {
      out.push_back(
          {what, "mint tokens elsewhere: give slurm.token_file a token for " + f.job_user +
                     " (`scontrol token username=" + f.job_user +
                     "`, renewed by a timer) instead of jwt_key_file, or run serve on a host "
                     "that is not a node, as another user with staging.group"});
    } else {
      out.push_back(
          {what, "run serve on a host that is not a compute node, or as another user than " +
                     f.job_user + " (staging.group), owning " + f.field});
    }
  }
  return out;
}

CheckResult checkCredential(const CredentialFacts& f) {
  const std::string name = "credential/" + f.field;
  json details = {{"field", f.field},
                  {"path", f.path},
                  {"serve_user", f.serve_user.name},
                  {"accepted", f.accepted}};
  if (!f.file.error.empty()) {
    return failCheck(name, fmt::format("cannot inspect {} {}: {}", f.field, f.path, f.file.error),
                     "make its directory searchable by the user serve runs as", details);
  }
  if (!f.file.exists) return skipCheck(name, f.field + " " + f.path + " does not exist");
  details["mode"] = fmt::format("{:04o}", f.file.mode);
  details["owner_uid"] = f.file.uid;
  if (f.fs_type && *f.fs_type) details["f_type"] = fmt::format("{:#x}", **f.fs_type);
  const std::vector<Exposure> exposures = credentialExposures(f);
  if (exposures.empty()) {
    return okCheck(name,
                   fmt::format("{} {} is {}'s alone (mode {:04o}) and out of the jobs' reach",
                               f.field, f.path, f.serve_user.name, f.file.mode),
                   details);
  }
  std::string what;
  std::string fix;
  json findings = json::array();
  for (const Exposure& e : exposures) {
    what += (what.empty() ? "" : "; ") + e.what;
    if (fix.find(e.fix) == std::string::npos) fix += (fix.empty() ? "" : "; ") + e.fix;
    findings.push_back(e.what);
  }
  details["exposures"] = std::move(findings);
  const std::string message =
      fmt::format("{} {} ({}) is exposed: {}", f.field, f.path, kindWords(f.kind), what);
  if (f.accepted) {
    return warnCheck(name, message + " (accepted: slurm.accept_exposed_credentials is true)", fix,
                     details);
  }
  return failCheck(name, message,
                   fix + " (or, to run anyway, set slurm.accept_exposed_credentials: true)",
                   details);
}

}  // namespace tuneplane::doctor
