#!/usr/bin/env python3
"""Writes the seed inputs of every fuzz target into fuzz/corpus/<target>/ from the project's
own examples (examples/) and recorded slurmrestd transcripts (tests/data/slurm/), plus a few
written here where those hold none (hostile strings for the renderer, partitions and nodes
answers, logs with broken UTF-8). Each input is named by the SHA-1 of its bytes, as
libFuzzer names what it adds, so re-running adds nothing twice. Run from anywhere:

    python3 fuzz/seed_corpus.py          # adds the seeds; never removes an input

`make fuzz-merge` later folds what libFuzzer found into the same directories (minimised).
PyYAML (python3-yaml) converts the YAML examples into their JSON twins."""
import glob
import hashlib
import json
import os
import struct
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
# An answer larger than this keeps only its first records: libFuzzer's mutations cost
# time per byte, and two records exercise every path a hundred do.
MAX_ANSWER = 48 * 1024


def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, hashlib.sha1(data).hexdigest())
    if not os.path.exists(path):
        with open(path, "wb") as out:
            out.write(data)


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


# Specs with every string a shell or YAML could misread, for the renderer's quoting check.
HOSTILE_SPEC = {
    "apiVersion": "tuneplane.io/v1",
    "kind": "TrainingJob",
    "metadata": {"name": "quoting", "labels": {"team": "it's \"q\""}},
    "spec": {
        "framework": {
            "name": "custom", "task": "custom", "runtime_id": "custom-torch-2.4",
            "command": ["python3", "-c", "print('it''s')"],
            "args": ["'; rm -rf / #", "$(id) `id` ${HOME} $HOME", "a\nb\tc\\", "\"\\\"'\\''",
                     "", " ", "é ☃ \u202e", "!{}[]*?~&|;<>()"],
            "env": {"QUOTE": "'\"$(x)'", "NEWLINE": "one\ntwo", "EMPTY": "", "IFS": ",",
                    "PATH": "/evil"},
        },
        "resources": {"pools": [{"name": "main", "nodes": 1, "gpus_per_node": 0, "cpus": 2,
                                 "memory_gb": 1}]},
    },
}


# A llamafactory job whose config holds what a YAML reader or a shell could misread: the
# config reader, the framework's rules and the YAML TunePlane writes for LlamaFactory.
HOSTILE_LLAMAFACTORY_SPEC = {
    "apiVersion": "tuneplane.io/v1",
    "kind": "TrainingJob",
    "metadata": {"name": "lora-sft"},
    "spec": {
        "framework": {
            "name": "llamafactory", "task": "sft", "runtime_id": "llamafactory-0.9-cu124",
            "config": {
                "model_name_or_path": "/models/it's \"q\" $(id)", "dataset": "a,b",
                "template": "# not a comment", "learning_rate": 1.0e-4, "seed": -9223372036854775808,
                "num_train_epochs": 3.0, "do_train": True, "stage": "sft",
                "default_system": "line\nbreak\t\u2028 \ufeff ${oc.env:HOME} yes: no",
                "ray_init_kwargs": {"runtime_env": {"env_vars": {"A": "`id`", "": None}}},
                "lora_target": ["q_proj", "v_proj", "", "[x]", {"k": [1, 2.5e-300]}],
            },
            "env": {"HF_HOME": "/models/hf"},
        },
        "resources": {"pools": [
            {"name": "h100s", "gpu_series": "h100", "nodes": 1, "gpus_per_node": 8, "cpus": 16,
             "memory_gb": 64},
            {"name": "a100s", "gpu_series": "a100", "nodes": 1, "gpus_per_node": 4, "cpus": 8,
             "memory_gb": 32}]},
        "retry": {"max_attempts": 2, "on": "any", "resume": False},
    },
}


def specs():
    texts = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.yaml"), recursive=True)):
        text = read(path)
        document = yaml.safe_load(text)
        if not isinstance(document, dict) or "apiVersion" not in document:
            continue  # a site, a registry
        texts.append(text)
        texts.append(json.dumps(document, indent=2))
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.json"), recursive=True)):
        texts.append(read(path))
    texts.append(yaml.safe_dump(HOSTILE_SPEC, allow_unicode=True))
    texts.append(json.dumps(HOSTILE_SPEC))
    gpu = json.loads(json.dumps(HOSTILE_SPEC))
    gpu["spec"]["resources"]["pools"] = [
        {"name": "head", "gpu_series": "h100", "nodes": 1, "gpus_per_node": 8, "cpus": 16,
         "memory_gb": 64},
        {"name": "workers", "gpu_series": "a100", "nodes": 2, "gpus_per_node": 4, "cpus": 8,
         "memory_gb": 32, "scratch_gb": 10}]
    texts.append(yaml.safe_dump(gpu, allow_unicode=True))
    texts.append(yaml.safe_dump(HOSTILE_LLAMAFACTORY_SPEC, allow_unicode=True))
    texts.append(json.dumps(HOSTILE_LLAMAFACTORY_SPEC))
    return texts


def catalog():
    for path in ("examples/site.yaml", "examples/site-apptainer.yaml", "examples/site-serve.yaml"):
        # parseSiteConfig has no file to resolve a relative path against: as installed.
        add("site", read(path).replace("runtime_registry_file: runtimes.yaml",
                                       "runtime_registry_file: /etc/tuneplane/runtimes.yaml"))
    registry = read("examples/runtimes.yaml")
    add("registry", registry)
    add("registry", json.dumps(yaml.safe_load(registry)))


def compact_answer(body):
    """The answer with at most two records in its lists, when it is large."""
    text = json.dumps(body, separators=(",", ":"))
    if len(text) <= MAX_ANSWER or not isinstance(body, dict):
        return text
    trimmed = dict(body)
    for key, value in body.items():
        if isinstance(value, list) and len(value) > 2:
            trimmed[key] = value[:2]
    return json.dumps(trimmed, separators=(",", ":"))


def answers():
    seen_routes = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/data/slurm/transcripts/*.json"))):
        with open(path, encoding="utf-8") as f:
            transcript = json.load(f)
        for exchange in transcript["exchanges"]:
            body = exchange["response"].get("body")
            if body is None:
                continue
            if isinstance(body, str):
                add("slurm_answers", body)  # an answer that is not JSON
                continue
            url = exchange["request"]["url"].split("v0.0.45")[-1].split("?")[0]
            route = exchange["request"]["method"] + " " + ("/job/{id}" if url.startswith("/job/")
                                                           and "submit" not in url else url)
            # A few answers of each route and status, not every poll of the same job.
            key = (route, exchange["response"]["status"])
            seen_routes[key] = seen_routes.get(key, 0) + 1
            if seen_routes[key] > 4:
                continue
            add("slurm_answers", compact_answer(body))
    # One answer as slurmrestd prints it (indented), for the whitespace paths.
    first = json.load(open(os.path.join(ROOT, "tests/data/slurm/transcripts/01_ping.json")))
    add("slurm_answers", json.dumps(first["exchanges"][0]["response"]["body"], indent=3))
    # GET /partitions/ and GET /nodes/ in the OpenAPI document's shapes (no transcript has them).
    add("slurm_answers", json.dumps({"partitions": [
        {"name": "gpu", "nodes": {"configured": "gpu[1-2]", "total": 2}, "cpus": {"total": 8},
         "partition": {"state": ["UP"]}},
        {"name": "cpu", "nodes": {"configured": "c1", "total": 1}, "cpus": {"total": 4},
         "partition": {"state": ["UP", "DRAIN"]}}], "warnings": [], "errors": []}))
    add("slurm_answers", json.dumps({"nodes": [
        {"name": "gpu1", "state": ["IDLE"], "features": ["h100"], "active_features": ["h100"],
         "partitions": ["gpu"], "gres": "gpu:h100:2", "cpus": 4, "real_memory": 2000},
        {"name": "n2", "state": ["DOWN", "DRAIN"], "features": "a,b", "partitions": []}]}))


def logs():
    texts = ["Hello, it's $(not a command) & `neither` from vm: job hello-tuneplane-1dab3f88, "
             "attempt 1\n",
             "line one\r\nline two\r\n\r\nno newline at the end",
             "\xe9t\xe9 \u2603 \U0001F600\n" * 3,
             ]
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/data/slurm/transcripts/*.json"))):
        with open(path, encoding="utf-8") as f:
            transcript = json.load(f)
        for key, value in transcript.items():
            if key.startswith("stdout") and isinstance(value, str) and value:
                texts.append(value)
    broken = [b"ok\n\xff\xfe bad \xc3\n\xe2\x82 cut \xf0\x9f\x98\n\xed\xa0\x80 surrogate\n",
              b"x" * 300 + b"\n\xc3\xa9" * 40 + b"\xe2\x82"]
    # Control bytes: flags (bit 0: also through a real file), max_bytes, max_lines.
    for number, text in enumerate([t.encode() for t in texts] + broken):
        for limits in ((1, 60, 0, 3), (0, 0xfc, 3, 63), (1, 4, 0, 0)):
            add("log_tail", struct.pack("4B", *limits) + text)
        if number > 8:
            break


def bodies():
    for text in specs():
        kind = "application/json" if text.lstrip().startswith("{") else "application/yaml"
        add("api_body", kind + "\n" + text)
    add("api_body", "text/plain; charset=utf-8\n" + read("examples/demo/hello-cpu.yaml"))
    add("api_body", 'application/json\n{"reason": "the node was lost [ops-123]"}')
    add("api_body", "Application/YAML \napiVersion: tuneplane.io/v1\nkind: [a, {b: [c]}]\n")


def main():
    for text in specs():
        add("spec", text)
        add("script_render", text)
    catalog()
    answers()
    logs()
    bodies()
    total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(CORPUS, "*", "*")))
    print(f"fuzz corpus: {total} bytes under {os.path.relpath(CORPUS, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
