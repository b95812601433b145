"""What the client's end-to-end tests run against: the slurmrestd simulator and `tuneplane
serve` on loopback with a throw-away site in a temporary directory (the Stack of
tests/support/serve_stack.py, which tests/web/console_browser_test.py uses too), and a TCP
proxy that can lose answers.

The binaries come from the environment: TUNEPLANE_BIN (the `tuneplane` CLI, which serves) and
TUNEPLANE_SLURMSIM_BIN (ctest sets both). Every wait is bounded; only processes started here
are ended, each by its own process group."""

import os
import re
import struct
import socket
import sys
import threading

# The package under test is the one beside these tests, not an installed copy.
_CLIENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _CLIENT)
# The stack the Python end-to-end tests share, in the repository's tests/support/.
sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(_CLIENT)), "tests", "support"))

from serve_stack import Stack as ServeStack  # noqa: E402

ALICE_TOKEN = "alice-python-client-token-1"
BOB_TOKEN = "bob-python-client-token-2"


class Stack(ServeStack):
    """The simulator and serve (tests/support/serve_stack.py), alice's and bob's tokens in its
    site; neither is an admin."""

    def __init__(self, tuneplane, slurmsim):
        super().__init__(tuneplane, slurmsim,
                         [("alice", ALICE_TOKEN, False), ("bob", BOB_TOKEN, False)],
                         prefix="tuneplane-pyclient-")


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
