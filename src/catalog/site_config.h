// What a site offers TunePlane: how to reach slurmrestd, default partitions, GPU series
// (each pinned to a Slurm constraint), the container runtime, the shared staging root and
// site mounts. Read from the operator's site file (YAML) by site_config_parser.h.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tuneplane::catalog {

enum class ContainerRuntime {
  kPyxis,      // srun --container-image=/abs/path.sqsh (Enroot + Pyxis)
  kApptainer,  // srun apptainer exec image.sif
};

// Whom Slurm runs a job as (slurm.identity; docs/operators.md, "Every user as themselves").
enum class IdentityMode {
  kShared,   // every job runs as slurm.user, the one account TunePlane holds
  kPerUser,  // every job runs as its TunePlane user's Unix user (server.tokens[].unix_user):
             // submit, cancel and every lookup of the job go to slurmrestd as that user
};

// slurm.preemption_warning: the signal Slurm sends a job's steps before it ends (its time
// limit, or a preemption's GraceTime where PreemptParameters=send_user_signal), so the
// training can save; when on, every job is submitted with it (kill_warning_signal/_delay/
// _flags) and every step starts with it ignored, so only a program that installs a handler
// gets it (docs/decisions.md "The preemption warning"). On unless the site turns it off.
struct PreemptionWarning {
  bool enabled = true;                   // `off` turns it off
  std::string signal = "USR2";           // one of kPreemptionSignals
  std::chrono::seconds before_end{120};  // kill_warning_delay: 1..65535 s (a uint16)
};

// The signals slurm.preemption_warning.signal may name, as Slurm spells them (no "SIG"). Not
// TERM, INT or USR1: TunePlane stops a Ray node's launcher and srun's tasks with those, and
// Slurm sends the warning to every process of a step; NCCL may catch USR1 besides.
inline constexpr const char* kPreemptionSignals[] = {"USR2", "HUP", "QUIT", "ALRM", "URG"};

// "USR2, HUP, …": the list, for messages that name the rule.
inline std::string preemptionSignalList() {
  std::string names;
  for (const char* name : kPreemptionSignals)
    names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

struct SlurmSite {
  std::string url;                   // http://, https:// or unix:///path
  std::string api_version = "auto";  // or v0.0.44, v0.0.45 (slurm/slurm_api.h)
  // shared: X-SLURM-USER-NAME and the token's "sun", the user every job runs as. per_user:
  // the service identity of the reads that are no one job's (the state poll, the listings,
  // nodes and partitions); each job's own requests go as its user.
  std::string user;
  IdentityMode identity = IdentityMode::kShared;
  std::optional<std::string> token_file;    // a JWT, optionally "SLURM_JWT=…"; or:
  std::optional<std::string> jwt_key_file;  // the HS256 key to mint tokens from
  std::chrono::seconds token_lifespan{1800};
  std::optional<std::string> account;
  std::optional<std::string> qos;
  std::map<std::string, std::string> job_environment;  // e.g. PATH for srun on the nodes
  std::optional<std::string> ca_file;                  // https: CA bundle
  std::optional<std::string> client_cert;              // https: optional client cert
  std::optional<std::string> client_key;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30000};
  // How long a job may stay PENDING on a reason Slurm uses for "can never run as submitted"
  // (slurm/pending_reasons.h) before TunePlane cancels it (cause rejected): time for an
  // administrator to fix the partition, account or QOS.
  std::chrono::milliseconds unrunnable_grace{300'000};
  // How long a node that failed an attempt of any job (NODE_FAIL, the script's node trouble)
  // is kept out of every job's next attempts too; 0 (the default): only the failed job's own
  // later attempts avoid it. Held in serve's memory: a restart forgets it.
  std::chrono::milliseconds failed_node_quarantine{0};
  // The operator accepts that a credential file (the JWT key or token, the TLS or client key,
  // the database password) is within the jobs' reach or readable by others: doctor warns
  // instead of failing, and serve starts (doctor/credential_checks.h).
  bool accept_exposed_credentials = false;
  PreemptionWarning preemption_warning;
};

struct Partitions {
  std::string gpu = "gpu";  // default partition for pools with GPUs
  std::string cpu = "cpu";  // default partition for CPU-only pools
  // partitions.allowed: the partitions a pool may name (pools[].partition), besides the two
  // defaults. Absent: the site lists none, and any name is left to Slurm to judge — TunePlane
  // cannot know the cluster's partitions without asking it, and validation asks nothing.
  std::optional<std::vector<std::string>> allowed = std::nullopt;

  // Whether a pool may name `name`: a default, one listed, or any when none are listed.
  bool accepts(const std::string& name) const;
  // The names a pool may give, defaults first; empty when the site lists none.
  std::vector<std::string> known() const;
};

struct GpuSeries {
  std::string name;                             // what specs name in pools[].gpu_series
  std::optional<std::string> slurm_constraint;  // node feature; absent → pools rejected
  int gpus_per_node = 0;                        // how many a node of this series has
  std::string gres_type;                        // e.g. "h100": tres_per_node gres/gpu:h100:N
};

struct SiteMount {
  std::string source;  // absolute path on the node
  std::string target;  // absolute path in the container
  bool read_only = true;
};

// How the batch script brings Ray up for GPU jobs. Nothing is pinned by default: the head
// takes a free GCS port when it starts, node-manager, object-manager and worker ports are
// Ray's own free choice, and the ports Ray would otherwise fix (client server, dashboard
// agent, dashboard) are picked free on each node just before Ray starts. So jobs that share
// a node cannot collide. A site whose firewall needs fixed ports pins them here; such jobs
// must not share nodes, and they ask Slurm for whole nodes (see pinsPorts()).
struct RayConfig {
  std::optional<int> port;                         // the head's GCS port
  std::optional<int> node_manager_port;            // every node
  std::optional<int> object_manager_port;          // every node
  std::optional<int> min_worker_port;              // set with max_worker_port, or neither
  std::optional<int> max_worker_port;              // above min_worker_port
  std::optional<int> ray_client_server_port;       // the head (Ray's default is 10001)
  std::optional<int> dashboard_agent_listen_port;  // every node (Ray's default is 52365)
  bool dashboard = false;                          // start the dashboard on the head
  std::optional<int> dashboard_port;               // only with dashboard
  int join_timeout_seconds = 300;  // bounds the wait for the head, then for all nodes
  std::string executable = "ray";  // inside the container

  // Every pinned port with its field name, in a fixed order.
  std::vector<std::pair<std::string, int>> pinnedPorts() const;
  // True when any port is pinned: two such jobs on one node would collide.
  bool pinsPorts() const { return !pinnedPorts().empty(); }
};

// How the OS user Slurm runs jobs as (slurm.user) gets to write an attempt's logs/ and
// output/ (the rule is staging/job_access.h).
struct StagingSettings {
  // A group that slurm.user belongs to and TunePlane can give files to: logs/ and output/
  // are made group-owned, group-writable and setgid. Absent: TunePlane itself must run as
  // slurm.user, so the job owns what it writes.
  std::optional<std::string> group;
};

struct SiteConfig {
  SlurmSite slurm;
  Partitions partitions;
  std::vector<GpuSeries> gpu_series;
  ContainerRuntime container_runtime = ContainerRuntime::kPyxis;
  std::string staging_root;  // absolute; the shared filesystem
  StagingSettings staging;
  std::vector<SiteMount> mounts;
  std::optional<std::string> runtime_registry_file;
  RayConfig ray;
  // The time limit of a job whose spec sets none; absent: no time_limit is sent and the
  // partition's default applies.
  std::optional<std::chrono::minutes> default_time_limit;

  const GpuSeries* findGpuSeries(const std::string& name) const;
};

const char* toString(ContainerRuntime runtime);
const char* toString(IdentityMode mode);  // "shared", "per_user"

}  // namespace tuneplane::catalog
