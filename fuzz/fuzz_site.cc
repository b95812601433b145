// See fuzz_site.h.
#include "fuzz_site.h"

#include <cstdint>
#include <span>
#include <string>

#include "catalog/site_loader.h"
#include "fuzz_errors.h"
#include "launch/attempt_identity.h"

namespace tuneplane::fuzz {
namespace {

// Not scripts/demo_site.py's site, on purpose: that one is written for the machine it runs on
// (the simulator's URL, the user running it, paths under its directory, images pinned by their
// real SHA-256) so that `make demo` runs a job. These are fixed texts, the same on every machine
// and every run, so a finding replays anywhere; and they hold what the demo site has no use for
// (Pyxis, https and unix-socket URLs, an account and QOS, Ray settings, a registry path that
// needs quoting). One template for both would tie the fuzz inputs to this machine.
constexpr const char* kPyxisSite = R"(slurm:
  url: https://slurm-rest.example.org:6820
  user: tuneplane
  jwt_key_file: /shared/tuneplane/secrets/jwt_hs256.key
  account: ml-research
  qos: normal
  job_environment:
    PATH: /usr/local/bin:/usr/bin:/bin
partitions:
  gpu: gpu
  cpu: cpu
gpu_series:
  - name: h100
    slurm_constraint: h100
    gpus_per_node: 8
    gres_type: h100
  - name: a100
    slurm_constraint: a100&ib
    gpus_per_node: 4
    gres_type: a100
  - name: l40s
    gpus_per_node: 4
    gres_type: l40s
container_runtime: pyxis
staging_root: /shared/tuneplane/attempts
mounts:
  - source: /shared/datasets
    target: /datasets
    read_only: true
  - source: /shared/models
    target: /models
runtime_registry_file: /etc/tuneplane/runtimes.yaml
default_time_limit: 2h
ray:
  join_timeout_seconds: 300
  executable: ray
)";

constexpr const char* kApptainerSite = R"(slurm:
  url: unix:///run/slurmrestd/slurmrestd.socket
  user: tuneplane
  token_file: /shared/tuneplane/secrets/slurm.jwt
partitions:
  gpu: gpu
  cpu: cpu
gpu_series:
  - name: h100
    slurm_constraint: h100
    gpus_per_node: 8
    gres_type: h100
  - name: a100
    slurm_constraint: a100
    gpus_per_node: 4
    gres_type: a100
container_runtime: apptainer
staging_root: /shared/tuneplane/attempts
mounts:
  - source: /shared/datasets
    target: /datasets
  - source: /shared/models
    target: /models
    read_only: true
runtime_registry_file: /etc/tuneplane/runtimes.yaml
ray:
  port: 6379
  min_worker_port: 20000
  max_worker_port: 20999
  dashboard: true
  dashboard_port: 8265
  join_timeout_seconds: 60
  executable: /opt/ray/bin/ray
)";

constexpr const char* kRegistry = R"(runtimes:
  - id: llamafactory-0.9-cu124
    format: sqsh
    path: /shared/runtimes/llamafactory-0.9-cu124.sqsh
    sha256: 3f1c0d5e9a7b2c4d6e8f00112233445566778899aabbccddeeff001122334455
    frameworks: [llamafactory]
  - id: llamafactory-0.9-cu124-sif
    format: sif
    path: /shared/runtimes/llamafactory-0.9-cu124.sif
    sha256: 9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9
    frameworks: [llamafactory]
  - id: custom-torch-2.4
    format: sqsh
    path: /shared/runtimes/custom-torch-2.4.sqsh
    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    frameworks: [custom]
  - id: custom-torch-2.4-sif
    format: sif
    path: /shared/runtimes/custom torch 'quoted' $(x).sif
    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdee
    frameworks: [custom]
  - id: custom-python-3.11
    format: sqsh
    path: /shared/runtimes/custom-python-3.11.sqsh
    sha256: fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
  - id: custom-demo
    format: sif
    path: /shared/runtimes/custom-demo.sif
    sha256: fedcba9876543210fedcba9876543210fedcba9876543210fedcba987654321f
)";

template <typename T>
T loaded(Checked<T> parsed, const char* what) {
  if (!parsed) checkFailed("fixture loads", what + describe(parsed.error()), __FILE__, __LINE__);
  return std::move(*parsed);
}

class FixedRandom final : public launch::RandomSource {
 public:
  Status fill(std::span<std::uint8_t> out) override {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(0xa5 ^ i);
    return ok();
  }
};

}  // namespace

const FuzzSite& fuzzSite() {
  static const FuzzSite site{loaded(catalog::parseSiteConfig(kPyxisSite), "the Pyxis site"),
                             loaded(catalog::parseSiteConfig(kApptainerSite), "the Apptainer site"),
                             loaded(catalog::parseRuntimeRegistry(kRegistry), "the registry")};
  return site;
}

launch::AttemptIdentity fixedIdentity(const std::string& name) {
  FixedRandom random;
  auto identity = launch::newAttemptIdentity(name, 1, random);
  FUZZ_CHECK(identity.has_value(), "no identity for a valid name '" + name + "'");
  return *identity;
}

std::string attemptDir(const catalog::SiteConfig& site, const launch::AttemptIdentity& identity) {
  return site.staging_root + "/jobs/" + identity.job_id + "/attempts/" +
         std::to_string(identity.attempt);
}

std::string checkpointDir(const catalog::SiteConfig& site,
                          const launch::AttemptIdentity& identity) {
  return site.staging_root + "/jobs/" + identity.job_id + "/checkpoints";
}

}  // namespace tuneplane::fuzz
