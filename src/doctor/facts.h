// What doctor gathered about a site before judging it: slurmrestd's answers, the token's
// (unverified) claims, the staging root as this process sees it, each artifact's
// verification, and a read-only look at the job store's database. The gathering layer (doctor.h)
// fills these through I/O; the judgement functions (slurm_checks.h, cluster_checks.h,
// staging_checks.h, artifact_checks.h) read only these (and, for the job user's access, staging's
// own verdict), so tests build them from tables. No credential is ever stored here. Plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/runtime_registry.h"
#include "common/result.h"
#include "slurm/api_negotiation.h"
#include "slurm/controller_config.h"
#include "slurm/job_record.h"
#include "slurm/rest_error.h"
#include "staging/job_access.h"
#include "store/store_probe.h"

namespace tuneplane::doctor {

// slurmrestd's answers. The partitions and nodes are asked for only after a successful ping.
struct SlurmFacts {
  std::string url;
  std::string api_version = "v0.0.45";  // slurm.api_version: a version, or "auto"
  // The version the client speaks (configured, or negotiated for "auto": what the server
  // serves and its release); unset when not asked (no client). Asked before the ping.
  std::optional<slurm::SlurmResult<slurm::ApiChoice>> api;
  // slurmrestd was not asked at all, and the answers below are empty, when there was no
  // token to send (the token check says why) or no client could be built (client_error).
  bool no_token = false;
  std::optional<Error> client_error;
  std::optional<slurm::SlurmResult<slurm::PingResult>> ping;
  std::optional<slurm::SlurmResult<std::vector<slurm::PartitionInfo>>> partitions;
  std::optional<slurm::SlurmResult<std::vector<slurm::NodeInfo>>> nodes;
  // The controller's preemption settings (GET /conf, v0.0.45): asked once, after a successful
  // ping; kErrConfUnavailable on a version without the route.
  std::optional<slurm::SlurmResult<slurm::ControllerConfig>> conf;
};

enum class TokenSource {
  kTokenFile,  // slurm.token_file: a JWT issued by `scontrol token`, re-read when it changes
  kJwtKey,     // slurm.jwt_key_file: TunePlane mints short-lived tokens itself
};

// The token as this process would send it, decoded WITHOUT verifying its signature.
struct TokenFacts {
  TokenSource source = TokenSource::kTokenFile;
  std::string path;                    // the token file or the key file
  std::string site_user;               // slurm.user (X-SLURM-USER-NAME)
  std::optional<Error> unavailable;    // the file could not be read, or no token minted
  bool decoded = false;                // a JWT with a JSON payload
  std::optional<std::string> subject;  // "sun"
  std::optional<int64_t> expires_at;   // "exp", Unix seconds
  std::chrono::seconds lifespan{0};    // kJwtKey: slurm.token_lifespan
  int64_t now_unix = 0;
};

struct PathInfo {
  bool exists = false;
  bool is_directory = false;
  std::string error;  // why stat failed, other than "does not exist"; empty otherwise
};

// slurm.identity per_user: one Unix user the site's tokens map to (server.tokens[].unix_user,
// else user), and whether its jobs' files can be staged as only it reaches them.
struct UserStagingFacts {
  std::string name;
  // staging::decideUserAccess: the user, its group and its users/<name> directory; unset when
  // not asked (the site's own rule failed: staging/user says why).
  std::optional<staging::AccessResult<staging::JobAccess>> access;
  // Whether Slurm knows the user and it has an association: filled by the Slurm side of
  // issue 44 (the gathering layer asks slurmrestd as the user); unset: not asked, and the
  // check says so.
  std::optional<Status> slurm;
};

// The staging root as this process sees it, and whether the job user can write attempts
// staged there (the rule of staging/job_access.h, asked through staging::decideJobAccess).
struct StagingFacts {
  std::string root;  // site staging_root
  PathInfo root_info;
  std::optional<Status> probe;              // create + remove a file; unset when not tried
  std::optional<Result<uint64_t>> fs_type;  // statfs(2) f_type; unset when not tried
  staging::OsUser process_user;             // this process's effective user
  std::string job_user_name;                // slurm.user: Slurm runs the jobs as this user
  std::optional<std::string> group_name;    // staging.group (issue 11) when the site names one
  // staging::decideJobAccess for the site: how the job user will write, or why it cannot.
  std::optional<staging::AccessResult<staging::JobAccess>> access;  // unset when not asked
  // slurm.identity per_user: each mapped user, in the order the tokens name them (once each).
  std::vector<UserStagingFacts> users;
};

// A file as stat(2) and realpath(3) see it.
struct FileInfo {
  bool exists = false;
  std::string error;      // why stat failed, other than "does not exist"; empty otherwise
  std::string canonical;  // realpath: symlinks and .. resolved (the path itself when it fails)
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t mode = 0;    // permission bits (07777)
  uint64_t device = 0;  // st_dev: which filesystem
};

// What a credential grants, which decides how much its exposure costs.
enum class CredentialKind {
  kSigningKey,  // slurm.jwt_key_file: mints a token for ANY Slurm user, SlurmUser included
  kToken,       // slurm.token_file: a token for slurm.user, which the jobs run as anyway
  kSecret,      // a TLS or client private key, the database password
};

// One credential file of the site and where it lives, against what the jobs can reach: the
// staging root (every job reads and writes there), the sources of the site's mounts (bound
// into every container), network filesystems (other hosts, the nodes among them, mount them),
// and who may read it besides the user serve runs as.
struct CredentialFacts {
  std::string field;  // "slurm.jwt_key_file", "server.tls.key", …
  std::string path;   // as the site resolved it
  CredentialKind kind = CredentialKind::kSecret;
  FileInfo file;
  std::optional<Result<uint64_t>> fs_type;  // statfs(2) f_type; unset when not asked
  staging::OsUser serve_user;               // who serve runs as (and must own the file)
  std::string job_user;                     // slurm.user: every job runs as this user
  std::string staging_root;                 // canonical
  std::optional<uint64_t> staging_device;   // st_dev of the staging root, when it exists
  std::optional<Result<uint64_t>> staging_fs_type;
  std::vector<std::pair<std::string, std::string>> mount_sources;  // (field, canonical source)
  // This host is one of the cluster's nodes (by name; empty when not known): a job placed
  // here runs on the very filesystem that holds the file.
  std::optional<std::string> host_node;
  bool accepted = false;  // slurm.accept_exposed_credentials
};

// One registry entry after verification.
struct ArtifactFacts {
  catalog::Runtime runtime;
  Status verified;                           // catalog::ArtifactVerifier's verdict
  std::optional<uint64_t> size_bytes;        // when the file exists
  std::optional<std::string> actual_sha256;  // on a mismatch: what the file hashes to
};

// The job store's database (server.db, or doctor's --db), looked at read-only
// (store/store_probe.h): no migration, no lease taken, no row written.
struct DatabaseFacts {
  std::string db;                    // as messages name it: a path, or a URI without its password
  bool postgres = false;             // a postgresql:// URI; otherwise a SQLite file
  bool exists = true;                // SQLite: the file exists (serve creates a missing one)
  std::optional<Error> unavailable;  // could not be opened or read, and why
  std::optional<store::StoreProbe> probe;  // what the look found, when there was one
};

}  // namespace tuneplane::doctor
