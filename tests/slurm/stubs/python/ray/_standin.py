"""SIMULATOR STAND-IN for Ray, for TunePlane's tests only (tests/slurm). It is not Ray.

`ray start` here does what matters for jobs that share a node, and nothing else: it binds
every port a real Ray node would bind, holds them until SIGTERM, and a worker joins only the
head whose address it is handed, and only with that head's token. The `ray` package beside
this file (init, is_initialized, nodes, shutdown) asks a head for its nodes, as the batch
script's wait program and a driver do.

Test conventions:
- Every node is this host. A node's address a.b.c.d is bound and reached as 127.b.c.d, so
  nodes with different addresses never collide, while two Rays on one node share its
  address and collide on any port both fix.
- A worker's own address is --node-ip-address, else what `getent ahostsv4 $SLURMD_NODENAME`
  gives (loopback skipped), as the script finds the head's.
- Ray's fixed defaults are kept: the dashboard (when not --include-dashboard=false) on 8265;
  the client server on the head on 10001 when `grpc` can be imported (Ray's test for
  ray[client], which also refuses --ray-client-server-port without it); the dashboard agent
  on 52365 (a taken agent port is reported and the node keeps running, as in Ray); worker
  ports 10002-19999, of which the first free one is bound (Ray's raylet checks ports before
  it hands them out). An option left out or given as 0 is the OS's free choice.
- Ray's own checks: --port and --include-dashboard only with --head; --temp-dir is ignored
  without --head; worker ports 0 or 1024-65535 with the top above the bottom; the client
  server port 1024-65535. Unknown options are refused. --block is required.
- Once it listens, the head writes its address (a.b.c.d:PORT) to <temp-dir>/ray_current_cluster
  (<TMPDIR>/ray without --temp-dir), like `ray start`.
- Token authentication as in Ray 2.52+: with RAY_AUTH_MODE=token, RAY_AUTH_TOKEN is the
  cluster's token on both sides; a head with a token refuses requests without it.
- Protocol: one JSON line per request on the head's GCS port: {"op": "join"|"nodes", "token",
  "node"}; a joined worker keeps its connection open, and is dead once it closes.
- A bind failure prints "could not bind the <what> port <p> on <ip>: <reason>" and exits 1.
"""

import hmac
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PREFIX = "stand-in ray"


class StandInError(Exception):
    pass


def loopback(ip):
    parts = ip.split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        raise StandInError(f"{PREFIX}: not an IPv4 address: {ip!r}")
    return "127." + ".".join(parts[1:])


def split_address(address):
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise StandInError(f"{PREFIX}: not an address (IP:PORT): {address!r}")
    return host, int(port)


def token_from_env():
    if os.environ.get("RAY_AUTH_MODE", "disabled") != "token":
        return None
    token = os.environ.get("RAY_AUTH_TOKEN", "")
    if not token:
        raise StandInError(
            f"{PREFIX}: Token authentication is enabled but no authentication token was found")
    return token


def request(address, message, timeout=5.0):
    """Sends one request; returns (connection, reader, reply). Raises on a refusal."""
    host, port = split_address(address)
    message = dict(message, token=token_from_env())
    connection = socket.create_connection((loopback(host), port), timeout=timeout)
    connection.sendall((json.dumps(message) + "\n").encode())
    reader = connection.makefile("r")
    line = reader.readline()
    if not line:
        connection.close()
        raise StandInError(f"{PREFIX}: {address} closed the connection")
    reply = json.loads(line)
    if not reply.get("ok"):
        connection.close()
        raise StandInError(f"{PREFIX}: the head at {address} refused: {reply.get('error')}")
    connection.settimeout(None)
    return connection, reader, reply


def _send(connection, **reply):
    connection.sendall((json.dumps(reply) + "\n").encode())


class Head:
    def __init__(self, listener, token, me):
        self.listener, self.token, self.nodes = listener, token, [me]
        self.lock = threading.Lock()

    def serve(self):
        while True:
            connection, _ = self.listener.accept()
            threading.Thread(target=self.handle, args=(connection,), daemon=True).start()

    def handle(self, connection):
        with connection:
            reader = connection.makefile("r")
            try:
                message = json.loads(reader.readline() or "{}")
            except ValueError:
                return
            given = message.get("token")
            if self.token is not None and not (
                    isinstance(given, str) and hmac.compare_digest(given, self.token)):
                _send(connection, ok=False, error="authentication failed: wrong or missing token")
                return
            if message.get("op") == "nodes":
                with self.lock:
                    _send(connection, ok=True, nodes=[dict(n) for n in self.nodes])
            elif message.get("op") == "join":
                node = dict(message.get("node") or {}, Alive=True)
                with self.lock:
                    self.nodes.append(node)
                _send(connection, ok=True)
                while reader.readline():
                    pass  # the worker holds the connection while it lives
                with self.lock:
                    node["Alive"] = False
            else:
                _send(connection, ok=False, error="unknown request")


def bind(ip, port, what):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((ip, port))
    except OSError as error:
        listener.close()
        raise StandInError(
            f"{PREFIX}: could not bind the {what} port {port} on {ip}: {error.strerror}")
    listener.listen(64)
    return listener


def bind_worker_port(ip, low, high):
    if low == 0:
        return bind(ip, 0, "worker")
    for port in range(low, high + 1):
        try:
            return bind(ip, port, "worker")
        except StandInError:
            continue
    raise StandInError(f"{PREFIX}: No available ports. Please specify a wider port range "
                       "using --min-worker-port and --max-worker-port.")


OPTIONS = {"--address", "--node-ip-address", "--port", "--include-dashboard", "--dashboard-port",
           "--node-manager-port", "--object-manager-port", "--min-worker-port",
           "--max-worker-port", "--ray-client-server-port", "--dashboard-agent-listen-port",
           "--temp-dir", "--num-cpus", "--num-gpus", "--resources"}
FLAGS = {"--head", "--block"}


def parse(argv):
    if not argv or argv[0] != "start":
        raise StandInError(f"{PREFIX}: only `ray start` is here, not {argv[:1]}")
    given, rest = {}, list(argv[1:])
    while rest:
        word = rest.pop(0)
        name, has_value, value = word.partition("=")
        if name in FLAGS and not has_value:
            given[name] = True
        elif name in OPTIONS:
            if not has_value:
                if not rest:
                    raise StandInError(f"Error: Option '{name}' requires an argument.")
                value = rest.pop(0)
            given[name] = value
        else:
            raise StandInError(f"Error: No such option: {name}")
    return given


def port_option(given, name, default):
    value = int(given.get(name, default))
    if not 0 <= value <= 65535:
        raise StandInError(f"{PREFIX}: {name} is not a port: {value}")
    return value


def node_ip(given):
    if "--node-ip-address" in given:
        return given["--node-ip-address"]
    name = os.environ.get("SLURMD_NODENAME", "")
    found = subprocess.run(["getent", "ahostsv4", name], capture_output=True, text=True)
    for line in found.stdout.splitlines():
        address = line.split()[0]
        if not address.startswith("127."):
            return address
    raise StandInError(f"{PREFIX}: no address for node {name!r}")


def start(given):
    head = bool(given.get("--head"))
    if not given.get("--block"):
        raise StandInError(f"{PREFIX}: only --block is supported")
    for head_only in ("--port", "--include-dashboard"):
        if head_only in given and not head:
            raise StandInError(
                f"`{head_only}` should only be specified when starting head node with `--head`.")
    if not head and "--address" not in given:
        raise StandInError("`--address` is a required flag unless starting a head node with "
                           "`--head`.")
    if "--temp-dir" in given and not head:
        print(f"{PREFIX}: `--temp-dir` is ignored without `--head`", file=sys.stderr)
    low = port_option(given, "--min-worker-port", 10002)
    high = port_option(given, "--max-worker-port", 19999)
    if low not in (0,) and low < 1024:
        raise StandInError("min_worker_port must be 0 or an integer between 1024 and 65535.")
    if high != 0 and (high < 1024 or high <= low):
        raise StandInError("max_worker_port must be higher than min_worker_port.")
    has_client = importlib.util.find_spec("grpc") is not None
    if "--ray-client-server-port" in given:
        if not has_client:
            raise StandInError("Ray Client requires pip package `ray[client]`.")
        if not 1024 <= int(given["--ray-client-server-port"]) <= 65535:
            raise StandInError("ray_client_server_port must be an integer between 1024 and "
                               "65535.")
    include_dashboard = given.get("--include-dashboard", "true").lower() in ("true", "1", "yes")
    token = token_from_env()
    ip = node_ip(given)
    local = loopback(ip)
    name = os.environ.get("SLURMD_NODENAME") or ip

    held = {}
    if head:
        held["gcs"] = bind(local, port_option(given, "--port", 6379), "GCS")
    held["node manager"] = bind(local, port_option(given, "--node-manager-port", 0),
                                "node manager")
    held["object manager"] = bind(local, port_option(given, "--object-manager-port", 0),
                                  "object manager")
    if head and include_dashboard:
        held["dashboard"] = bind(local, port_option(given, "--dashboard-port", 8265), "dashboard")
    if head and has_client:
        held["client server"] = bind(
            local, port_option(given, "--ray-client-server-port", 10001), "client server")
    try:
        held["dashboard agent"] = bind(
            local, port_option(given, "--dashboard-agent-listen-port", 52365), "dashboard agent")
    except StandInError as error:
        print(f"{error} (the agent's HTTP server is off; the node keeps running)",
              file=sys.stderr)
    held["worker"] = bind_worker_port(local, low, high)

    resources = {"CPU": float(given.get("--num-cpus", 1)), "GPU": float(given.get("--num-gpus", 0))}
    resources.update(json.loads(given.get("--resources", "{}")))
    me = {"NodeName": name, "NodeManagerAddress": ip, "Alive": True, "Resources": resources,
          "Ports": {what: s.getsockname()[1] for what, s in held.items()}}
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))

    if head:
        address = f"{ip}:{held['gcs'].getsockname()[1]}"
        threading.Thread(target=Head(held["gcs"], token, me).serve, daemon=True).start()
        temp_dir = given.get("--temp-dir") or os.path.join(tempfile.gettempdir(), "ray")
        os.makedirs(temp_dir, exist_ok=True)
        with open(os.path.join(temp_dir, "ray_current_cluster"), "w") as reported:
            reported.write(address)
        print(f"{PREFIX}: head started at {address}", flush=True)
        while True:
            time.sleep(3600)

    address = given["--address"]
    deadline = time.monotonic() + 5
    while True:
        try:
            connection, reader, _ = request(address, {"op": "join", "node": me})
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise StandInError(f"{PREFIX}: no head answers at {address}")
            time.sleep(0.1)
    print(f"{PREFIX}: joined the head at {address} as {name}", flush=True)
    while reader.readline():
        pass
    raise StandInError(f"{PREFIX}: lost the head at {address}")


def main(argv):
    try:
        start(parse(argv))
    except StandInError as error:
        print(error, file=sys.stderr)
        return 1
    return 0
