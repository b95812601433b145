#!/usr/bin/env python3
"""Writes the demo site: the one `make demo` (scripts/demo.sh) runs on, and the one every job
spec example in README.md, docs/*.md and examples/ is validated against in CI
(scripts/check_docs.py examples).

    scripts/demo_site.py DIR [--slurm-url URL]

Into DIR: secrets/jwt_hs256.key (made once, 0600), shared/runtimes/<id>.sif (stand-ins for
published SIF images: the simulator's `apptainer exec` runs the command on this machine),
runtimes.yaml (each stand-in pinned by its real SHA-256), shared/staging/, cluster.yaml (the
simulator's nodes and partitions: `tuneplane-slurmsim --cluster`) and site.yaml (no
`server:` section; demo.sh appends one). The GPU series, partitions and runtimes are the ones
the guides' examples name, and the simulator's nodes are what the site says they are. Run it
again with the simulator's URL once it listens: the key and the images stay as they are.
Standard library only.
"""
import argparse
import hashlib
import os
import pathlib
import pwd
import sys

# id -> frameworks. custom-demo runs the quick start's job; the others are the runtime ids the
# guides' examples name.
RUNTIMES = {
    "custom-demo": ["custom"],
    "custom-python-3.11": ["custom"],
    "custom-torch-2.4": ["custom"],
    "llamafactory-0.9-cu124": ["llamafactory"],
}

CLUSTER = """\
# Written by scripts/demo_site.py: the simulator's cluster, as the demo site describes it.
nodes:
  - {name: gpu1, cpus: 128, memory_mb: 2097152, gpus: 8, gpu_type: h100, features: [h100]}
  - {name: gpu2, cpus: 128, memory_mb: 2097152, gpus: 8, gpu_type: h100, features: [h100]}
  - {name: gpu3, cpus: 64, memory_mb: 524288, gpus: 4, gpu_type: a100, features: [a100]}
  - {name: cpu1, cpus: 16, memory_mb: 65536}
partitions:
  - {name: gpu, nodes: [gpu1, gpu2, gpu3]}
  - {name: gpu-spot, nodes: [gpu1, gpu2, gpu3]}
  - {name: cpu, nodes: [cpu1], default: true}
  - {name: debug, nodes: [cpu1]}
users:
  - {name: tpuser, uid: 1001}
  - {name: alice, uid: 1002}
  - {name: bob, uid: 1003}
"""


def image_text(runtime_id):
    if runtime_id == "custom-demo":
        return "TunePlane demo runtime (a stand-in for a SIF image)\n"
    return f"TunePlane demo runtime {runtime_id} (a stand-in for a SIF image)\n"


def write_site(root, slurm_url):
    root = root.resolve()
    for sub in ("shared/runtimes", "shared/staging", "shared/datasets", "shared/models", "secrets"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    key = root / "secrets" / "jwt_hs256.key"
    if not key.exists():
        key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    registry = ["runtimes:"]
    for runtime_id, frameworks in RUNTIMES.items():
        image = root / "shared" / "runtimes" / f"{runtime_id}.sif"
        image.write_text(image_text(runtime_id), encoding="utf-8")
        sha = hashlib.sha256(image.read_bytes()).hexdigest()
        registry += [f"  - id: {runtime_id}", "    format: sif", f"    path: {image}",
                     f"    sha256: {sha}", f"    frameworks: [{', '.join(frameworks)}]"]
    (root / "runtimes.yaml").write_text("\n".join(registry) + "\n", encoding="utf-8")
    (root / "cluster.yaml").write_text(CLUSTER, encoding="utf-8")
    # Not the text of fuzz/fuzz_site.cc's sites, on purpose: this one must run here (the
    # simulator's URL, this user, paths under `root`, the images' real SHA-256) and its GPU
    # series are the simulator's nodes (CLUSTER); the fuzz targets' sites are fixed texts that
    # read no file and never change between machines or runs, so a finding replays anywhere.
    site = f"""\
# Written by scripts/demo_site.py: the simulator stands in for the site's slurmrestd.
slurm:
  url: {slurm_url}
  api_version: v0.0.45
  user: {pwd.getpwuid(os.geteuid()).pw_name}
  jwt_key_file: secrets/jwt_hs256.key
  token_lifespan: 10m
  job_environment:
    PATH: {os.environ.get("PATH", "/usr/bin:/bin")}
partitions:
  gpu: gpu
  cpu: cpu
  allowed: [gpu-spot, debug]
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
staging_root: {root / "shared" / "staging"}
mounts:
  - {{source: {root / "shared" / "datasets"}, target: /datasets, read_only: true}}
  - {{source: {root / "shared" / "models"}, target: /models, read_only: true}}
runtime_registry_file: runtimes.yaml
"""
    (root / "site.yaml").write_text(site, encoding="utf-8")
    return root / "site.yaml"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--slurm-url", default="http://127.0.0.1:6820",
                        help="the simulator's URL (default: a placeholder; validation offline "
                             "never calls it)")
    args = parser.parse_args()
    print(write_site(args.dir, args.slurm_url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
