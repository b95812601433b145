"""Job specs from Python: build them as dicts, send them as JSON (POST /v1/jobs and
/v1/validate take application/json), or write them as YAML that reads back as written.

PyYAML (YAML 1.1) reads an unquoted `on`, `off`, `yes`, `no`, `y` or `n` as a boolean, so a
spec read with yaml.safe_load() has the key True where `spec.retry.on` was, and
yaml.safe_dump() writes it back as `true:` — refused with `spec.retry.true: unknown field`. spec_to_yaml() quotes every key and string
that a YAML 1.1 or 1.2 reader could take for anything but a string (`"on": never`), so its
output means the same to TunePlane, PyYAML and every other reader. The client itself sends
dicts as JSON, where the question does not arise."""

import json
import math
import os
import re

# Plain scalars that YAML 1.1 (PyYAML) or 1.2 reads as booleans or null, in any case.
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ""}
_SAFE_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./+-]*")
_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")
_NUMBER_LIKE = re.compile(r"[-+]?(\.?[0-9]|\.(inf|nan))", re.IGNORECASE)


def _scalar(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a spec holds no {value!r}")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    raise TypeError(f"cannot write {type(value).__name__} into a spec: {value!r}")


def _string(text):
    """A plain scalar when nothing can mistake it, else a double-quoted one (JSON's escapes
    are YAML's)."""
    if (_SAFE_PLAIN.fullmatch(text) and text.lower() not in _RESERVED
            and not _NUMBER_LIKE.match(text)):
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    # Characters YAML does not allow unescaped in a double-quoted scalar (JSON leaves them).
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def _key(key):
    if not isinstance(key, str):
        raise TypeError(f"spec keys are strings, not {type(key).__name__}: {key!r}")
    return _string(key)


def _emit(value, indent, lines, prefix):
    """Appends `value` as block YAML; `prefix` is what precedes it on its first line."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        first = True
        for k, v in value.items():
            head = prefix if first else pad
            first = False
            _emit_member(f"{head}{_key(k)}:", v, indent, lines)
    elif isinstance(value, (list, tuple)) and value:
        first = True
        for item in value:
            head = prefix if first else pad
            first = False
            if isinstance(item, (dict, list, tuple)) and item:
                _emit(item, indent + 2, lines, f"{head}- ")
            else:
                lines.append(f"{head}- {_flow(item)}")
    else:
        lines.append(f"{prefix}{_flow(value)}")


def _emit_member(head, value, indent, lines):
    if isinstance(value, dict) and value:
        lines.append(head)
        _emit(value, indent + 2, lines, " " * (indent + 2))
    elif isinstance(value, (list, tuple)) and value:
        lines.append(head)
        _emit(value, indent + 2, lines, " " * (indent + 2))
    else:
        lines.append(f"{head} {_flow(value)}")


def _flow(value):
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    return _scalar(value)


def spec_to_yaml(spec):
    """The spec (a dict of dicts, lists, strings, numbers, booleans and None) as block YAML
    that every YAML reader reads back as the same dict: `retry.on` stays the key "on"."""
    if not isinstance(spec, dict):
        raise TypeError("a spec is a dict")
    lines = []
    _emit(spec, 0, lines, "")
    return "\n".join(lines) + "\n"


def spec_to_json(spec):
    """The spec as the JSON text the client sends (UTF-8, key order kept)."""
    return json.dumps(spec, ensure_ascii=False, indent=None, separators=(",", ":"),
                      allow_nan=False)


def spec_body(spec):
    """(bytes, Content-Type) for POST /v1/jobs and /v1/validate. A dict is sent as JSON; a
    str or bytes as it is (YAML or JSON text); an os.PathLike is read (a spec file)."""
    if isinstance(spec, dict):
        return spec_to_json(spec).encode("utf-8"), "application/json"
    if isinstance(spec, os.PathLike):
        with open(spec, "rb") as f:
            spec = f.read()
    if isinstance(spec, str):
        spec = spec.encode("utf-8")
    if not isinstance(spec, (bytes, bytearray)):
        raise TypeError("a spec is a dict, YAML or JSON text, or a path (pathlib.Path)")
    body = bytes(spec)
    looks_json = body.lstrip()[:1] == b"{"
    return body, "application/json" if looks_json else "application/yaml"


def with_workdir(spec, reference):
    """A copy of the spec (a dict) whose spec.workdir is `reference` ("sha256:<hex>", what
    Client.upload_workdir returns). A spec naming another folder already is refused
    (ValueError): leave spec.workdir out, or the folder."""
    if not isinstance(spec, dict):
        raise TypeError("a spec is a dict")
    body = spec.get("spec")
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise TypeError("the spec's `spec` is not a mapping")
    named = body.get("workdir")
    if named is not None and named != reference:
        raise ValueError(f"the spec names workdir {named} and the folder is {reference}: "
                         "leave spec.workdir out, or the folder")
    copy = dict(spec)
    copy["spec"] = dict(body, workdir=reference)
    return copy


def custom_job(name, command, *, runtime_id, args=None, env=None, labels=None, nodes=1,
               gpus_per_node=0, cpus=1, memory_gb=1, time_limit="10m", max_attempts=1,
               retry_on=None, pool="main"):
    """A TrainingJob spec (a dict) for a custom framework with one pool: `command` (a list)
    run in the registry's runtime `runtime_id`. Edit the dict for anything else
    (docs/users.md, "Writing a job spec")."""
    framework = {"name": "custom", "task": "custom", "runtime_id": runtime_id,
                 "command": list(command)}
    if args is not None:
        framework["args"] = list(args)
    if env:
        framework["env"] = dict(env)
    metadata = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    retry = {"max_attempts": max_attempts}
    if retry_on is not None:
        retry["on"] = retry_on
    return {
        "apiVersion": "tuneplane.io/v1",
        "kind": "TrainingJob",
        "metadata": metadata,
        "spec": {
            "framework": framework,
            "resources": {
                "time_limit": time_limit,
                "pools": [{"name": pool, "nodes": nodes, "gpus_per_node": gpus_per_node,
                           "cpus": cpus, "memory_gb": memory_gb}],
            },
            "retry": retry,
        },
    }
