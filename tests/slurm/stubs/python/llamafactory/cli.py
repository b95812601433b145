"""SIMULATOR STAND-IN for LlamaFactory's `llamafactory-cli train`, for TunePlane's tests only
(adapted from the test cluster's stand-in). It is not LlamaFactory: it trains nothing. It
behaves where TunePlane depends on LlamaFactory (0.9.5 and later) behaving:

- `llamafactory-cli train CONFIG.yaml [key=value ...]`: the config is read as LlamaFactory
  reads it (OmegaConf over PyYAML: here PyYAML's safe_load, YAML 1.1), then the overrides.
  A .json config is refused, as LlamaFactory's main branch breaks on it
  (`json.load(Path(...))` in hparams/parser.py). `stage` must be a LlamaFactory stage.
- USE_RAY=1 (or true/y): attaches to the Ray cluster at RAY_ADDRESS (ray.init() without an
  address, as LlamaFactory does; with RAY_AUTH_TOKEN when the cluster has one), refuses
  ray_num_workers above the cluster's GPUs, and asks one placement bundle {"CPU": 10,
  "GPU": 1} per worker. A cluster with fewer CPUs than that never makes the group ready: the
  real one waits forever, this one LLAMAFACTORY_STANDIN_PG_WAIT seconds (default 30), then
  fails saying why. Without USE_RAY it trains "on this node".
- output_dir is required. Unless overwrite_output_dir is true, training resumes from the
  highest output_dir/checkpoint-N directory (transformers' get_last_checkpoint) and says
  "resumed from checkpoint-N"; resume_from_checkpoint, when set, names the one to resume
  from. An output_dir holding a finished model but no checkpoint is refused, as transformers
  does ("Output directory ... already exists and is not empty").
- It "trains" max_steps steps (default 4), LLAMAFACTORY_STANDIN_STEP_SECONDS each (default
  1), writing output_dir/checkpoint-<step>/trainer_state.json every save_steps (default 1),
  then output_dir/adapter_model.safetensors.
- LLAMAFACTORY_STANDIN_FAIL_AT_STEP=N: the first run that reaches step N exits 1 there (a
  marker in output_dir remembers it), so a retry can show that it resumed.
- Each run prints, first, one line "llamafactory stand-in: run {JSON}" with what it saw: the
  config, the Ray address, the cluster's resources, the workers, and the step it starts from.
"""
import json
import os
import re
import socket
import sys
import time

STAGES = ("pt", "sft", "rm", "ppo", "dpo", "kto")
PREFIX = "llamafactory stand-in"


def _true(value):
    return str(value).lower() in ("1", "true", "y", "yes")


def _fail(message):
    print(f"{PREFIX}: {message}", file=sys.stderr, flush=True)
    return 1


def _last_checkpoint(folder):
    steps = [int(m.group(1)) for name in os.listdir(folder)
             if (m := re.fullmatch(r"checkpoint-(\d+)", name))
             and os.path.isdir(os.path.join(folder, name))]
    return max(steps) if steps else None


def _placement(config, seen):
    import ray
    ray.init()
    resources = ray.cluster_resources()
    workers = int(config.get("ray_num_workers", 1))
    seen.update(ray_address=os.environ.get("RAY_ADDRESS"), cluster=resources, workers=workers)
    gpus, cpus = resources.get("GPU", 0), resources.get("CPU", 0)
    if workers > gpus:
        return f"ValueError: ray_num_workers ({workers}) exceeds the GPUs in the Ray cluster ({gpus:g})"
    if cpus < 10 * workers:
        time.sleep(float(os.environ.get("LLAMAFACTORY_STANDIN_PG_WAIT", "30")))
        return (f"placement group never ready: {workers} bundles of {{'CPU': 10, 'GPU': 1}} need "
                f"{10 * workers} CPUs, Ray has {cpus:g}")
    return None


def train(argv):
    if not argv or not argv[0].endswith((".yaml", ".yml")):
        return _fail("usage: llamafactory-cli train CONFIG.yaml [key=value ...] "
                     "(a .json config breaks LlamaFactory's main branch)")
    import yaml
    with open(argv[0], encoding="utf-8") as f:
        config = yaml.safe_load(f) or {}
    for override in argv[1:]:
        key, _, value = override.partition("=")
        config[key] = yaml.safe_load(value)
    if config.get("stage", "sft") not in STAGES:
        return _fail(f"unknown stage {config.get('stage')!r}")
    seen = {"config": config, "host": socket.gethostname()}
    if _true(os.environ.get("USE_RAY", "")):
        refused = _placement(config, seen)
        if refused:
            return _fail(refused)
    out = config.get("output_dir")
    if not out:
        return _fail("output_dir is required")
    os.makedirs(out, exist_ok=True)
    start = 0
    if config.get("resume_from_checkpoint"):
        start = int(re.sub(r".*checkpoint-", "", str(config["resume_from_checkpoint"])))
    elif not config.get("overwrite_output_dir", False):
        last = _last_checkpoint(out)
        if last is not None:
            start = last
        elif os.path.exists(os.path.join(out, "adapter_model.safetensors")):
            return _fail(f"ValueError: Output directory ({out}) already exists and is not empty.")
    seen["start_step"] = start
    print(f"{PREFIX}: run {json.dumps(seen, sort_keys=True)}", flush=True)
    if start:
        print(f"{PREFIX}: resumed from checkpoint-{start}", flush=True)
    max_steps = int(config.get("max_steps", 4))
    save = max(1, int(config.get("save_steps", 1)))
    fail_at = os.environ.get("LLAMAFACTORY_STANDIN_FAIL_AT_STEP")
    marker = os.path.join(out, ".standin-failed-once")
    for step in range(start + 1, max_steps + 1):
        time.sleep(float(os.environ.get("LLAMAFACTORY_STANDIN_STEP_SECONDS", "1")))
        if fail_at and int(fail_at) == step and not os.path.exists(marker):
            open(marker, "w").close()
            print(f"{PREFIX}: crashed at step {step}", flush=True)
            return 1
        if step % save == 0:
            checkpoint = os.path.join(out, f"checkpoint-{step}")
            os.makedirs(checkpoint, exist_ok=True)
            with open(os.path.join(checkpoint, "trainer_state.json"), "w") as f:
                json.dump({"global_step": step}, f)
        print(f"{PREFIX}: step {step}/{max_steps}", flush=True)
    with open(os.path.join(out, "adapter_model.safetensors"), "w") as f:
        f.write("stand-in weights\n")
    print(f"{PREFIX}: training done", flush=True)
    return 0


def main(argv):
    if argv[:1] == ["train"]:
        return train(argv[1:])
    return _fail(f"only `train` is here, not {argv[:1]}")
