"""What the console's browser test needs besides the console: bounded waits, plain HTTP
requests, and a client for the W3C WebDriver protocol (JSON over HTTP, spoken here with the
standard library only, so no Selenium is needed) — the few commands chromedriver is asked.
"""
import base64
import json
import os
import socket
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference

class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait_for(what, probe, timeout=30.0, interval=0.2):
    """Calls probe() until it returns a true value (returned) or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
            if last:
                return last
        except Failure as e:
            last = e
        time.sleep(interval)
    raise Failure(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None, timeout=30):
    """(status, headers, body bytes) of one request; HTTP errors are answers, not exceptions."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return res.status, res.headers, res.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


class WebDriver:
    """The few W3C WebDriver commands the test needs."""

    def __init__(self, url):
        self.url = url
        self.session = None

    def _call(self, method, path, payload=None, timeout=60):
        body = None if payload is None else json.dumps(payload).encode()
        status, _, raw = http(method, self.url + path, body,
                              {"Content-Type": "application/json"}, timeout)
        answer = json.loads(raw or b"{}")
        if status != 200:
            raise Failure(f"webdriver {method} {path}: {status} {answer.get('value', answer)}")
        return answer.get("value")

    def start(self, chromium, profile):
        args = ["--headless=new", "--disable-gpu", "--window-size=1440,1000",
                f"--user-data-dir={profile}", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args, "prefs": {
                # Downloads land here without a prompt (the console's Download buttons).
                "download.default_directory": os.path.join(profile, "downloads"),
                "download.prompt_for_download": False}},
            "goog:loggingPrefs": {"browser": "ALL"},
            "timeouts": {"script": 20000, "pageLoad": 30000, "implicit": 0}}}}
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def s(self, method, path, payload=None):
        return self._call(method, f"/session/{self.session}{path}", payload)

    def quit(self):
        if self.session:
            try:
                self._call("DELETE", f"/session/{self.session}", timeout=20)
            except Exception:  # the process group is killed next anyway
                pass
            self.session = None

    def go(self, url):
        self.s("POST", "/url", {"url": url})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        found = self.s("POST", "/elements", {"using": "css selector", "value": css})
        return found[0][ELEMENT] if found else None

    def element(self, css, timeout=30.0):
        return wait_for(f"element {css}", lambda: self.find(css), timeout)

    def _on_fresh_element(self, act, attempts=5):
        """act() again when the page re-rendered the element between finding and using it: the
        console redraws lists on its own refresh, so a found element may be replaced by an equal
        one before the next command reaches it (WebDriver's 'stale element reference')."""
        for attempt in range(attempts):
            try:
                return act()
            except Failure as e:
                if "stale element reference" not in str(e) or attempt == attempts - 1:
                    raise
                time.sleep(0.1)

    def text(self, css):
        def read():
            el = self.find(css)
            return None if el is None else self.s("GET", f"/element/{el}/text")
        return self._on_fresh_element(read)

    def click(self, css, timeout=30.0):
        self._on_fresh_element(
            lambda: self.s("POST", f"/element/{self.element(css, timeout)}/click", {}))

    def type(self, css, text):
        el = self.element(css)
        self.s("POST", f"/element/{el}/value", {"text": text})

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.s("GET", "/screenshot")))

    def browser_log(self):
        try:
            return self.s("POST", "/se/log", {"type": "browser"}) or []
        except Failure:
            return []
