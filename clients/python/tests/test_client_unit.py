"""The client without a TunePlane server: spec_to_yaml's quoting, the config the CLI reads,
and submit's retries under one Idempotency-Key against a scripted loopback HTTP server (the
waits are recorded, not slept)."""

import http.server
import json
import os
import socket
import stat
import tempfile
import threading
import unittest

import support  # noqa: F401  (puts the package beside the tests first on sys.path)

from tuneplane_client import (Client, SubmitOutcomeUnknown, TunePlaneError, custom_job,
                              spec_to_json, spec_to_yaml)
from tuneplane_client import config
from tuneplane_client.spec import spec_body

try:
    import yaml  # optional: PyYAML, when installed, checks the round trip
except ImportError:
    yaml = None


class SpecTest(unittest.TestCase):
    def spec(self):
        return custom_job("demo", ["python3", "-c"], args=["print('hi')\nprint(2)"],
                          runtime_id="custom-demo", retry_on="never",
                          env={"ON": "yes", "NUM": "010", "EMPTY": "", "NULL": "null",
                               "COLON": "a: b", "HASH": "x #y", "UNI": "é\u2028"},
                          labels={"team": "nlp"})

    def test_reserved_words_are_quoted(self):
        text = spec_to_yaml(self.spec())
        self.assertIn('\n    "on": never\n', text)
        for line in ('"ON": "yes"', 'NUM: "010"', 'EMPTY: ""', '"NULL": "null"',
                     'COLON: "a: b"', 'HASH: "x #y"', 'time_limit: "10m"', '- "-c"'):
            self.assertIn(line, text)
        self.assertNotIn("true:", text)
        self.assertIn(r"\u2028", text)  # a line separator escaped, never raw

    def test_shapes(self):
        text = spec_to_yaml({"a": [], "b": {}, "c": [[1, 2.5], {"x": None, "y": True}],
                             "d": [{"k": [1]}]})
        self.assertEqual(text, "a: []\nb: {}\nc:\n  - - 1\n    - 2.5\n  - x: null\n"
                               "    \"y\": true\nd:\n  - k:\n      - 1\n")
        with self.assertRaises(TypeError):
            spec_to_yaml({1: "x"})
        with self.assertRaises(ValueError):
            spec_to_yaml({"x": float("nan")})

    @unittest.skipUnless(yaml, "PyYAML is not installed")
    def test_pyyaml_reads_it_back(self):
        spec = self.spec()
        self.assertEqual(yaml.safe_load(spec_to_yaml(spec)), spec)
        # The issue: PyYAML reads a spec's unquoted `on:` as True, and writes it back `true:`.
        loaded = yaml.safe_load("retry:\n  on: never\n")
        self.assertEqual(loaded, {"retry": {True: "never"}})
        self.assertIn("true: never", yaml.safe_dump(loaded))

    def test_bodies(self):
        spec = self.spec()
        body, kind = spec_body(spec)
        self.assertEqual((json.loads(body), kind), (spec, "application/json"))
        self.assertEqual(body.decode(), spec_to_json(spec))
        self.assertEqual(spec_body("kind: TrainingJob\n")[1], "application/yaml")
        self.assertEqual(spec_body(b' {"kind": "TrainingJob"}')[1], "application/json")


class ConfigTest(unittest.TestCase):
    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="tp-client-home-")
        self.addCleanup(lambda: __import__("shutil").rmtree(self.home, ignore_errors=True))

    def write(self, relative, text, mode=0o600):
        path = os.path.join(self.home, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def test_arguments_then_environment_then_file(self):
        self.write(".config/tuneplane/config.yaml",
                   "# mine\nserver: 'http://file:1/'\ntoken_file: tok\n")
        self.write(".config/tuneplane/tok", "file-token\n")
        env = {"HOME": self.home}
        self.assertEqual(config.resolve(environ=env), ("http://file:1", "file-token", None))
        env.update({"TUNEPLANE_SERVER": "http://env:2", "TUNEPLANE_TOKEN": "env-token",
                    "TUNEPLANE_CA_FILE": "/ca.pem"})
        self.assertEqual(config.resolve(environ=env), ("http://env:2", "env-token", "/ca.pem"))
        self.assertEqual(config.resolve("https://arg:3", "arg", environ=env)[:2],
                         ("https://arg:3", "arg"))

    def test_xdg_config_home(self):
        self.write("xdg/tuneplane/config.yaml", "server: http://xdg:1\ntoken: t\n")
        env = {"HOME": "/nonexistent", "XDG_CONFIG_HOME": os.path.join(self.home, "xdg")}
        self.assertEqual(config.resolve(environ=env)[:2], ("http://xdg:1", "t"))

    def test_refusals(self):
        env = {"HOME": self.home}
        path = self.write(".config/tuneplane/config.yaml", "server: http://x:1\ntoken: t\n",
                          0o644)
        with self.assertRaises(TunePlaneError) as caught:
            config.resolve(environ=env)
        self.assertEqual(caught.exception.code, "config.insecure_permissions")
        self.assertIn("chmod 600", caught.exception.message)
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        self.assertEqual(config.resolve(environ=env)[1], "t")
        with self.assertRaises(TunePlaneError) as caught:
            config.resolve("ftp://x", "t", environ={})
        self.assertEqual(caught.exception.code, "cli.invalid_server")
        with self.assertRaises(TunePlaneError) as caught:
            config.resolve("http://u:p@x", "t", environ={})
        self.assertEqual(caught.exception.code, "cli.invalid_server")
        with self.assertRaises(TunePlaneError) as caught:
            config.resolve(environ={})
        self.assertEqual(caught.exception.code, "cli.no_server")


class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers POST /v1/jobs from the server's script: an int status (with an API error),
    "drop" (closes without answering), or "job" (201 with a job)."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.headers.get("Idempotency-Key"), body))
        step = self.server.script.pop(0) if self.server.script else "drop"
        if step == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        status, payload = (201, {"id": "j-1", "phase": "Pending", "terminal": False,
                                 "attempts": []}) if step == "job" else (
            step, {"errors": [{"code": "api.overloaded", "field": "", "message": "busy"}]})
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class RetryTest(unittest.TestCase):
    def serve(self, script):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        server.script, server.seen = list(script), []
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                  daemon=True)
        thread.start()

        def stop():
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
        self.addCleanup(stop)
        return server

    def client(self, url, **kw):
        self.now = 0.0
        self.waits = []

        def sleep(seconds):
            self.waits.append(seconds)
            self.now += seconds
        return Client(url, "t", timeout=5, _sleep=sleep, _clock=lambda: self.now, **kw)

    def url(self, server):
        return "http://127.0.0.1:%d" % server.server_address[1]

    def test_lost_answers_and_busy_server_are_asked_again_under_one_key(self):
        server = self.serve(["drop", 503, 502, 429, "drop", "job"])
        job = self.client(self.url(server)).submit({"kind": "TrainingJob"})
        self.assertEqual(job["id"], "j-1")
        self.assertEqual(self.waits, [0.5, 1.0, 2.0, 4.0, 8.0])
        keys = {key for key, _ in server.seen}
        self.assertEqual(len(keys), 1)
        self.assertRegex(keys.pop(), r"^[0-9a-f]{32}$")
        self.assertEqual({body for _, body in server.seen}, {b'{"kind":"TrainingJob"}'})
        self.assertEqual(job.idempotency_key, server.seen[0][0])

    def test_an_answer_lost_for_good_names_the_key(self):
        server = self.serve([])  # every request dropped
        with self.assertRaises(SubmitOutcomeUnknown) as caught:
            self.client(self.url(server)).submit("kind: TrainingJob\n",
                                                 idempotency_key="my-key-1")
        self.assertEqual(caught.exception.idempotency_key, "my-key-1")
        self.assertIn("my-key-1", str(caught.exception))
        # 0.5 + 1 + 2 + 4 + 6 × 8 = 55.5 s: the next 8 s would pass the 60 s budget.
        self.assertEqual(self.waits, [0.5, 1.0, 2.0, 4.0] + [8.0] * 6)
        self.assertEqual(len(server.seen), 11)

    def test_refusals_and_an_unreachable_server_are_not_retried(self):
        server = self.serve([422])
        with self.assertRaises(TunePlaneError) as caught:
            self.client(self.url(server)).submit("kind: TrainingJob\n")
        self.assertEqual((caught.exception.status, self.waits), (422, []))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # nothing listens on it once closed
        with self.assertRaises(TunePlaneError) as caught:
            self.client(f"http://127.0.0.1:{port}").submit("kind: TrainingJob\n")
        self.assertEqual((caught.exception.code, self.waits), ("client.unreachable", []))
        self.assertNotIsInstance(caught.exception, SubmitOutcomeUnknown)

    def test_the_token_is_never_in_a_message(self):
        client = self.client("http://127.0.0.1:9")
        self.assertNotIn("'t'", repr(client))
        with self.assertRaises(TunePlaneError) as caught:
            client.whoami()
        self.assertEqual(caught.exception.code, "client.unreachable")


if __name__ == "__main__":
    unittest.main()
