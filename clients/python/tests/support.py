"""What the client's end-to-end tests run against: the slurmrestd simulator and `tuneplane
serve` on loopback with a throw-away site in a temporary directory (as
tests/web/console_browser_test.py's Stack), and a TCP proxy that can lose answers.

The binaries come from the environment: TUNEPLANE_BIN (the `tuneplane` CLI, which serves) and
TUNEPLANE_SLURMSIM_BIN (ctest sets both). Every wait is bounded; only processes started here
are ended, each by its own process group."""

import hashlib
import os
import re
import shutil
import signal
import struct
import socket
import subprocess
import sys
import tempfile
import threading
import time

# The package under test is the one beside these tests, not an installed copy.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ALICE_TOKEN = "alice-python-client-token-1"
BOB_TOKEN = "bob-python-client-token-2"


def wait_for(what, probe, timeout=30.0, interval=0.05):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what} (last: {last!r})")


class Stack:
    """The simulator and serve, with their files in one temporary directory."""

    def __init__(self, tuneplane, slurmsim):
        self.tuneplane, self.slurmsim = tuneplane, slurmsim
        self.dir = tempfile.mkdtemp(prefix="tuneplane-pyclient-")
        self.procs = []  # (name, Popen), started here; ended in reverse order
        self.server = None

    def spawn(self, name, argv):
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
        d = self.dir
        for sub in ("shared/runtimes", "shared/staging", "secrets"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        key = os.path.join(d, "secrets/jwt_hs256.key")
        with open(key, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(key, 0o600)
        image = os.path.join(d, "shared/runtimes/custom-demo.sif")
        with open(image, "wb") as f:
            f.write(b"TunePlane Python client test runtime (a stand-in for a SIF image)\n")
        with open(image, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(d, "runtimes.yaml"), "w") as f:
            f.write(f"runtimes:\n  - id: custom-demo\n    format: sif\n    path: {image}\n"
                    f"    sha256: {sha}\n    frameworks: [custom]\n")
        sim = self.spawn("slurmsim", [self.slurmsim, "--listen", "127.0.0.1:0", "--jwt-key", key,
                                      "--state", os.path.join(d, "sim"), "--epilog-ms", "100"])
        sim_url = self.wait_line("slurmsim", "out", r"(http://127\.0\.0\.1:\d+)", sim)
        user = subprocess.run(["id", "-un"], capture_output=True, text=True, check=True,
                              timeout=10).stdout.strip()
        tokens = "".join(
            f"    - {{user: {u}, token_sha256: {hashlib.sha256(t.encode()).hexdigest()}}}\n"
            for u, t in (("alice", ALICE_TOKEN), ("bob", BOB_TOKEN)))
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
  poll_interval: 200ms
  tokens:
{tokens}""")
        serve = self.spawn("serve", [self.tuneplane, "serve", "--site",
                                     os.path.join(d, "site.yaml")])
        self.server = self.wait_line("serve", "err", r"listening on (http://[0-9.]+:\d+)", serve)
        return self.server

    def stop(self):
        """Ends every process started here; returns the problems seen (an exit status other
        than 0 after SIGTERM)."""
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
            if p.returncode != 0:
                problems.append(f"{name} exited {p.returncode} on SIGTERM: "
                                f"{self.read(name, 'err')[-2000:]}")
        if not problems and not os.environ.get("TUNEPLANE_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)
        return problems


def _read_request(sock):
    """One HTTP request's bytes (head and Content-Length body), or b"" when the peer closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    length = int(m.group(1)) if m else 0
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


class LosingProxy:
    """A loopback TCP proxy to `upstream` (http://host:port) that loses answers: each request
    is read whole and forwarded (one request per connection: the client sends Connection:
    close); the answer is read whole from upstream and relayed — except, while `lose` > 0
    (or always with lose=-1) for a request whose first line starts with `match`, where the
    client's connection is reset instead, after upstream has answered (so the server acted on
    it). `seen` counts the requests that matched."""

    def __init__(self, upstream, match=b"POST /v1/jobs ", lose=1):
        host, port = upstream.split("://", 1)[1].rsplit(":", 1)
        self.upstream = (host, int(port))
        self.match, self.lose = match, lose
        self.seen = 0
        self.lost = 0
        self._lock = threading.Lock()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.settimeout(0.2)
        self.url = "http://127.0.0.1:%d" % self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client):
        client.settimeout(30)
        with client:
            request = _read_request(client)
            if not request:
                return
            with socket.create_connection(self.upstream, timeout=30) as up:
                up.sendall(request)
                answer = b""
                while True:
                    chunk = up.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
            drop = False
            if request.startswith(self.match):
                with self._lock:
                    self.seen += 1
                    if self.lose != 0:
                        drop = True
                        self.lost += 1
                        if self.lose > 0:
                            self.lose -= 1
            if drop:  # a reset, as when a proxy or the network drops the connection
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            client.sendall(answer)

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()
