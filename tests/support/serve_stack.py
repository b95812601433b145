"""The stack the Python end-to-end tests run against: the slurmrestd simulator and `tuneplane
serve` on loopback, with a throw-away site in one temporary directory (a JWT key, a stand-in
runtime image pinned by its SHA-256, a staging root, the simulator's partitions and GPU series,
and a `server:` section holding the tokens given, each stored as its hash).

Used by clients/python/tests/support.py (the Python client's tests) and
tests/web/console_browser_test.py (the console's, which adds chromedriver); each puts this
folder on sys.path, so the import works from a clean clone. Standard library only.

Every wait is bounded; only processes started here are ended, each by its own process group."""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time


def wait_for(what, probe, timeout=30.0, interval=0.05):
    """Calls probe() until it returns a true value (returned) or `timeout` seconds pass
    (AssertionError naming `what`)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what} (last: {last!r})")


class Stack:
    """The simulator and serve, with their files in one temporary directory.

    tokens: (user, token, admin) for `server.tokens`. epilog_ms: the simulator's epilog.
    poll_interval: serve's. accounting: the simulator serves slurmdbd's routes (the console's
    usage page). stop() leaves the directory in place when it saw a problem, when `keep` is
    set, or when TUNEPLANE_KEEP is in the environment."""

    # The processes start() starts: stop() holds each to a clean exit and no sanitizer report.
    OWN = ("serve", "slurmsim")

    def __init__(self, tuneplane, slurmsim, tokens, prefix="tuneplane-stack-", epilog_ms=100,
                 poll_interval="200ms", accounting=False):
        self.tuneplane, self.slurmsim = tuneplane, slurmsim
        self.tokens = tokens
        self.epilog_ms, self.poll_interval, self.accounting = epilog_ms, poll_interval, accounting
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.procs = []  # (name, Popen), started here; ended in reverse order
        self.server = None
        self.keep = bool(os.environ.get("TUNEPLANE_KEEP"))

    def spawn(self, name, argv):
        """Starts `argv` in a process group of its own, its output in <dir>/<name>.out|err."""
        with open(os.path.join(self.dir, f"{name}.out"), "wb") as out, \
                open(os.path.join(self.dir, f"{name}.err"), "wb") as err:
            p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        self.procs.append((name, p))
        return p

    def read(self, name, stream):
        try:
            with open(os.path.join(self.dir, f"{name}.{stream}"), "r", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_line(self, name, stream, pattern, proc, timeout=30.0):
        def probe():
            if proc.poll() is not None:
                raise AssertionError(f"{name} exited {proc.returncode}: "
                                     f"{self.read(name, 'err')[-2000:]}")
            m = re.search(pattern, self.read(name, stream))
            return m.group(1) if m else None
        return wait_for(f"{name} to start", probe, timeout)

    def start(self):
        """Starts the simulator, writes the site, starts serve; returns serve's URL."""
        d = self.dir
        for sub in ("shared/runtimes", "shared/staging", "secrets"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        key = os.path.join(d, "secrets/jwt_hs256.key")
        with open(key, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(key, 0o600)
        image = os.path.join(d, "shared/runtimes/custom-demo.sif")
        with open(image, "wb") as f:
            f.write(b"TunePlane test runtime (a stand-in for a SIF image)\n")
        with open(image, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(d, "runtimes.yaml"), "w") as f:
            f.write(f"runtimes:\n  - id: custom-demo\n    format: sif\n    path: {image}\n"
                    f"    sha256: {sha}\n    frameworks: [custom]\n")
        argv = [self.slurmsim, "--listen", "127.0.0.1:0", "--jwt-key", key,
                "--state", os.path.join(d, "sim"), "--epilog-ms", str(self.epilog_ms)]
        if self.accounting:
            argv.append("--accounting")
        sim = self.spawn("slurmsim", argv)
        sim_url = self.wait_line("slurmsim", "out", r"(http://127\.0\.0\.1:\d+)", sim)
        self.sim_url = sim_url  # its admin route (POST /sim/admin/faults) for tests' faults
        user = subprocess.run(["id", "-un"], capture_output=True, text=True, check=True,
                              timeout=10).stdout.strip()
        tokens = "".join(
            f"    - {{user: {u}, token_sha256: {hashlib.sha256(t.encode()).hexdigest()}, "
            f"admin: {'true' if admin else 'false'}}}\n"
            for u, t, admin in self.tokens)
        with open(os.path.join(d, "site.yaml"), "w") as f:
            f.write(f"""slurm:
  url: {sim_url}
  api_version: auto
  user: {user}
  jwt_key_file: secrets/jwt_hs256.key
  token_lifespan: 10m
  job_environment:
    PATH: {os.environ.get('PATH', '/usr/bin:/bin')}
partitions:
  gpu: gpu
  cpu: cpu
gpu_series:
  - name: h100
    slurm_constraint: h100
    gpus_per_node: 2
    gres_type: h100
container_runtime: apptainer
staging_root: {d}/shared/staging
runtime_registry_file: runtimes.yaml
server:
  listen: 127.0.0.1:0
  db: tuneplane.db
  poll_interval: {self.poll_interval}
  tokens:
{tokens}""")
        serve = self.spawn("serve", [self.tuneplane, "serve", "--site",
                                     os.path.join(d, "site.yaml")])
        self.server = self.wait_line("serve", "err", r"listening on (http://[0-9.]+:\d+)", serve)
        return self.server

    def stop(self):
        """Ends every process started here (its whole group: chromium under chromedriver);
        returns the problems seen in serve and the simulator: an exit status other than 0
        after SIGTERM, or a sanitizer's report."""
        problems = []
        for name, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=15)
            if name in self.OWN:
                if p.returncode != 0:
                    problems.append(f"{name} exited {p.returncode} on SIGTERM: "
                                    f"{self.read(name, 'err')[-2000:]}")
                if re.search(r"AddressSanitizer|LeakSanitizer|runtime error:",
                             self.read(name, "err")):
                    problems.append(f"{name}: a sanitizer report:\n"
                                    f"{self.read(name, 'err')[-3000:]}")
        if problems:
            self.keep = True
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        return problems
