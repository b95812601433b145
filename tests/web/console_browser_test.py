#!/usr/bin/env python3
"""The web console in a real headless browser (Debian's chromium + chromedriver, driven over
the W3C WebDriver HTTP protocol with the standard library only) against `tuneplane serve`
and the slurmrestd simulator, all on loopback, all started here and stopped at the end.

  console_browser_test.py --tuneplane BIN --slurmsim BIN [--screenshots DIR] [--keep]

Checks: the security headers; token entry; the list shows a submitted job and it moves to
Succeeded without a reload; the job page shows attempts, Slurm job ids, SLUIDs and the log;
its files: folders to open, a download saved byte for byte, links listed and not served;
a job waiting in Slurm's queue shows its reason, place and Slurm's estimate (list and page);
a job preempted once shows the preemption's count and its attempt's cause (issue 47);
cancel with its confirmation; a refused spec shows each error at its field; a hostile spec
(labels/env) and a hostile log line render as text and run nothing; an admin's site page
shows capabilities and doctor's checks; the usage page counts a job's run from slurmdbd's
record. --screenshots writes the list, job, submit, site and usage pages as PNG files
(docs/screenshots/ in the repo is made this way).

Every wait is bounded; chromedriver runs on a free loopback port in a process group of its
own, with a fresh profile in a temporary directory; only processes started here are ended.
Exit codes: 0 passed, 1 a check failed, 77 chromium or chromedriver is not installed (ctest
reports the test as skipped).
"""
import argparse
import json
import os
import re
import shutil
import sys
import time

from browser_support import Failure, WebDriver, check, free_port, http, wait_for

# The stack the Python end-to-end tests share, in tests/support/ beside this folder.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "support"))
from serve_stack import Stack as ServeStack  # noqa: E402

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
ALICE, OPS = "alice-console-token-1", "ops-console-token-2"
# Markup that would run if it were ever parsed as HTML: each sets a flag the test reads.
HOSTILE_IMG = '<img src=x onerror="window.__pwned=1;document.title=\'pwned\'">'
HOSTILE_SCRIPT = "<script>window.__pwned=2</script>"


class Stack(ServeStack):
    """The simulator and serve (tests/support/serve_stack.py: alice's token and the admin ops's
    in its site, slurmdbd's routes for the usage page), and chromedriver."""

    def __init__(self, args):
        # --accounting: slurmdbd's records, for the usage page.
        super().__init__(args.tuneplane, args.slurmsim,
                         [("alice", ALICE, False), ("ops", OPS, True)],
                         prefix="tuneplane-console-", epilog_ms=300, poll_interval="500ms",
                         accounting=True)
        self.args = args
        self.keep = self.keep or args.keep

    def start(self):
        """Starts the simulator and serve, then chromedriver; returns chromedriver's URL."""
        super().start()
        port = free_port()
        driver = self.spawn("chromedriver", [self.args.chromedriver, f"--port={port}"])
        url = f"http://127.0.0.1:{port}"

        def ready():
            if driver.poll() is not None:
                raise SystemExit(f"chromedriver exited: {self.read('chromedriver', 'err')}")
            try:
                status, _, body = http("GET", url + "/status", timeout=2)
                return status == 200 and json.loads(body)["value"]["ready"]
            except OSError:
                return False
        wait_for("chromedriver", ready, 30.0, 0.1)
        return url


def spec(name, command, labels=None, env=None, nodes=1, cpus=1):
    lines = ["apiVersion: tuneplane.io/v1", "kind: TrainingJob", "metadata:", f"  name: {json.dumps(name)}"]
    if labels:
        lines += ["  labels:"] + [f"    {k}: {json.dumps(v)}" for k, v in labels.items()]
    lines += ["spec:", "  framework:", "    name: custom", "    task: custom",
              "    runtime_id: custom-demo", f"    command: {json.dumps(command)}"]
    if env:
        lines += ["    env:"] + [f"      {k}: {json.dumps(v)}" for k, v in env.items()]
    lines += ["  resources:", "    time_limit: 10m", "    pools:", "      - name: main",
              f"        nodes: {nodes}", "        gpus_per_node: 0", f"        cpus: {cpus}",
              "        memory_gb: 1", "  retry:", "    max_attempts: 1", ""]
    return "\n".join(lines)


class ConsoleTest:
    def __init__(self, stack, wd, shots):
        self.stack, self.wd, self.shots = stack, wd, shots
        self.base = stack.server

    def api(self, method, path, body=None, token=ALICE, content_type="application/yaml"):
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = content_type
        status, _, raw = http(method, self.base + path, body.encode() if body is not None else None, headers)
        return status, json.loads(raw or b"null")

    def shot(self, name, full=False):
        if not self.shots:
            return
        if full:  # the whole page, not only the window (WebDriver shoots the viewport)
            height = min(2600, self.wd.js("return document.documentElement.scrollHeight;") + 140)
            self.wd.s("POST", "/window/rect", {"width": 1440, "height": max(1000, height)})
        self.wd.screenshot(os.path.join(self.shots, f"{name}.png"))
        if full:
            self.wd.s("POST", "/window/rect", {"width": 1440, "height": 1000})

    def not_pwned(self, where):
        flags = self.wd.js("return [typeof window.__pwned, document.title,"
                           " document.querySelectorAll('main script, main img').length];")
        check(flags[0] == "undefined", f"{where}: a hostile payload ran (window.__pwned set)")
        check("pwned" not in flags[1], f"{where}: a hostile payload ran (document.title {flags[1]!r})")
        check(flags[2] == 0, f"{where}: {flags[2]} script/img elements inside the page's main part")

    def sign_in(self, token, user):
        self.wd.go(self.base + "/")
        self.wd.element("#login:not([hidden]) #token")
        self.wd.type("#token", token)
        self.wd.click("#sign-in")
        wait_for(f"signed in as {user}", lambda: (self.wd.text("#who") or "").startswith(user))

    def phase_in_list(self, job_id):
        return self.wd.text(f'#jobs-body tr[data-id="{job_id}"] .phase')

    def run(self):
        steps = [self.security_headers, self.list_follows_a_job_to_succeeded,
                 self.job_page_shows_attempts_sluids_and_log, self.hostile_spec_and_log_render_as_text,
                 self.files_are_listed_and_downloaded, self.waiting_job_shows_place_and_estimate,
                 self.preempted_job_shows_its_preemption,
                 self.cancel_with_confirmation, self.refused_spec_shows_errors_at_fields,
                 self.field_lines_table,
                 self.valid_spec_submits_and_opens_the_job, self.admin_sees_all_and_site_checks,
                 self.usage_counts_the_jobs_runs,
                 self.token_never_in_a_url_or_log, self.no_csp_violations]
        for step in steps:
            start = time.monotonic()
            step()
            print(f"ok   {step.__name__} ({time.monotonic() - start:.1f} s)", flush=True)

    def security_headers(self):
        for path, ctype in (("/", "text/html"), ("/ui/job.html", "text/html"),
                            ("/ui/js/api.js", "text/javascript"), ("/ui/console.css", "text/css")):
            status, headers, _ = http("GET", self.base + path)
            check(status == 200, f"GET {path}: {status}")
            check(headers.get("Content-Security-Policy") == CSP, f"{path}: CSP is {headers.get('Content-Security-Policy')!r}")
            check(headers.get("X-Content-Type-Options") == "nosniff", f"{path}: no nosniff")
            check(headers.get("Referrer-Policy") == "no-referrer", f"{path}: no Referrer-Policy")
            check(headers.get("Content-Type", "").startswith(ctype), f"{path}: Content-Type {headers.get('Content-Type')}")

    def list_follows_a_job_to_succeeded(self):
        # A token the server does not know is refused at the form and not kept.
        self.wd.go(self.base + "/")
        self.wd.element("#login:not([hidden]) #token")
        self.wd.type("#token", "not-a-token")
        self.wd.click("#sign-in")
        wait_for("the refusal", lambda: "does not know this token" in (self.wd.text("#login-error") or ""))
        check(self.wd.js("return sessionStorage.length;") == 0, "a refused token was kept")
        self.sign_in(ALICE, "alice")
        self.wd.element("#jobs-body")
        # A marker on the window: it survives polling but not a reload.
        self.wd.js("window.__loadedOnce = 'yes';")
        # More than the 2,000 lines the server returns: the log viewer marks it truncated.
        command = ["python3", "-c", "import time\nprint('hello from the console test')\n"
                   "for i in range(2500): print('filler line', i)\n"
                   f"print({HOSTILE_IMG!r})\nprint({HOSTILE_SCRIPT!r})\ntime.sleep(2)\nprint('done')"]
        status, job = self.api("POST", "/v1/jobs", spec("console-hello", command, labels={"team": "web"}))
        check(status == 201, f"submit: {status} {job}")
        self.hello = job["id"]
        wait_for("the job in the list", lambda: self.phase_in_list(self.hello), 30)
        wait_for("Succeeded in the list", lambda: self.phase_in_list(self.hello) == "Succeeded", 120)
        check(self.wd.js("return window.__loadedOnce;") == "yes", "the list reloaded the page")
        attempts = self.wd.text(f'#jobs-body tr[data-id="{self.hello}"] td:nth-child(4)')
        check(attempts == "1", f"attempts column {attempts!r}")

    def preempted_job_shows_its_preemption(self):
        # Issue 47: preempted once (the simulator's preemption, a grace time of 30 s), warned,
        # it exits 0; Slurm's record says PREEMPTED, so the attempt's cause is preempted and
        # the job is retried without using its one attempt. The page counts the preemption
        # and marks the attempt's cause.
        command = ["python3", "-c",
                   "import os, signal, sys, time\n"
                   "if os.environ['TUNEPLANE_ATTEMPT'] != '1': print('done'); sys.exit(0)\n"
                   "signal.signal(signal.SIGUSR2, lambda *a: sys.exit(0))\n"
                   "open(os.environ['TUNEPLANE_OUTPUT_DIR'] + '/ready', 'w').close()\n"
                   "while True: time.sleep(0.05)"]
        status, job = self.api("POST", "/v1/jobs", spec("console-preempted", command))
        check(status == 201, f"submit: {status} {job}")
        job_id = job["id"]

        def first_ready():
            _, j = self.api("GET", f"/v1/jobs/{job_id}")
            a = j["attempts"][0] if j.get("attempts") else None
            if not a or not a["components"] or not a["components"][0].get("sluid"):
                return None
            ready = os.path.exists(os.path.join(a["staging_dir"], "output", "ready"))
            return a["components"][0]["sluid"] if ready else None
        sluid = wait_for("the first attempt's handler", first_ready, 60)
        status, _, body = http("POST", self.stack.sim_url + "/sim/admin/faults",
                               json.dumps({"preempt": {"job": sluid, "grace_s": 30}}).encode(),
                               {"Content-Type": "application/json"})
        check(status == 200, f"preempt: {status} {body!r}")
        self.wd.go(self.base + f"/ui/job.html?id={job_id}")
        wait_for("Succeeded on the page", lambda: self.wd.text("#job-phase") == "Succeeded", 120)
        count = wait_for("the preemption count", lambda: self.wd.text("#job-preemptions"), 15)
        check(count.startswith("1 (retried without using one of retry.max_attempts)"),
              f"preemptions shown as {count!r}")
        cause = self.wd.text('section.attempt[data-attempt="1"] .cause-preempted') or ""
        check(cause == "preempted", f"attempt 1's cause shown as {cause!r}")
        _, job = self.api("GET", f"/v1/jobs/{job_id}")
        check(job["preemptions"] == 1 and len(job["attempts"]) == 2, f"the API's job: {job['preemptions']}, {len(job['attempts'])} attempts")

    def job_page_shows_attempts_sluids_and_log(self):
        self.wd.click(f'#jobs-body tr[data-id="{self.hello}"] td.name a')
        wait_for("the job page", lambda: self.wd.text("#job-phase") == "Succeeded", 30)
        sluid = wait_for("a SLUID", lambda: (self.wd.text('section.attempt td.sluid') or "").strip("—"), 15)
        check(re.fullmatch(r"[A-Za-z0-9]{8,}", sluid), f"SLUID {sluid!r}")
        job_id = self.wd.text("section.attempt td.slurm-job-id")
        check(job_id and job_id.isdigit(), f"Slurm job id {job_id!r}")
        check(self.wd.text("section.attempt td.exit-code") == "0", "exit code 0 shown")
        check(self.wd.text("section.attempt td.nodes") not in (None, "", "—"), "nodes shown")
        _, job = self.api("GET", f"/v1/jobs/{self.hello}")
        check(job["attempts"][0]["components"][0]["sluid"] == sluid, "the SLUID shown is the API's")
        log = wait_for("the log", lambda: "done" in (self.wd.text("#log") or "") and self.wd.text("#log"), 30)
        # The tail: the last 2,000 lines, so the first line is cut and the mark says so.
        check("filler line 2499" in log and "hello from the console test" not in log, f"log tail: {log[:200]!r}…")
        check(len(log.split("\n")) == 2000, f"the tail has {len(log.splitlines())} lines")
        mark = self.wd.text("#log-truncated") or ""
        check(mark.startswith("truncated"), f"no truncated mark (got {mark!r})")
        events = self.wd.text("#events") or ""
        check("Succeeded" in events and "Running" in events, f"events timeline: {events!r}")
        self.shot("job", full=True)

    def files_are_listed_and_downloaded(self):
        # A job whose output/ holds a folder with binary weights, a file named with markup and
        # a link to /etc/passwd: the page lists them, opens the folder, downloads the weights
        # byte for byte (into the browser's download folder) and never serves the link.
        command = ["python3", "-c",
                   "import os\nout = os.environ['TUNEPLANE_OUTPUT_DIR']\n"
                   "os.makedirs(out + '/model')\n"
                   "open(out + '/model/weights.bin', 'wb').write(bytes(range(256)) * 400)\n"
                   f"open(out + '/' + {HOSTILE_IMG.replace('/', '_')!r}, 'w').write('x')\n"
                   "os.symlink('/etc/passwd', out + '/passwd')\nprint('done')"]
        status, job = self.api("POST", "/v1/jobs", spec("console-files", command))
        check(status == 201, f"submit: {status} {job}")
        self.wd.go(f"{self.base}/ui/job.html?id={job['id']}")
        wait_for("Succeeded", lambda: self.wd.text("#job-phase") == "Succeeded", 120)
        self.wd.click("#files-refresh")
        wait_for("the files", lambda: self.wd.find('#files-body tr[data-path="model"]'), 30)
        link = self.wd.text('#files-body tr[data-path="passwd"]') or ""
        check("not served" in link, f"the link's row: {link!r}")
        check(self.wd.js("return document.querySelectorAll('#files-body tr[data-path=\"passwd\"] button').length;") == 0,
              "a link has a download button")
        self.not_pwned("job page (hostile file name)")
        self.wd.click('#files-body tr[data-path="model"] button.link')
        wait_for("the model folder", lambda: self.wd.find('#files-body tr[data-path="model/weights.bin"]'), 30)
        crumbs = self.wd.text("#files-path") or ""
        check("model" in crumbs, f"breadcrumbs {crumbs!r}")
        self.wd.click('#files-body tr[data-path="model/weights.bin"] button.download')
        wait_for("saved", lambda: "Saved weights.bin" in (self.wd.text("#files-status") or ""), 30)
        saved = os.path.join(self.stack.dir, "profile", "downloads", "weights.bin")
        wait_for("the downloaded file", lambda: os.path.exists(saved) and os.path.getsize(saved) == 102400, 30)
        with open(saved, "rb") as f:
            check(f.read() == bytes(range(256)) * 400, "the downloaded weights differ from the job's")
        hint = self.wd.text("#files-hint") or ""
        check(f"tuneplane cp -r {job['id']}:1/model ." in hint, f"the cp hint: {hint!r}")

    def waiting_job_shows_place_and_estimate(self):
        # A job takes every CPU of the simulator's cpu1 (4); the next one waits on Resources,
        # with Slurm's estimate (the first one's time limit) and its place.
        status, big = self.api("POST", "/v1/jobs", spec("console-big", ["sleep", "300"], cpus=4))
        check(status == 201, f"submit: {status} {big}")
        self.wd.go(self.base + "/")
        wait_for("the big job running", lambda: self.phase_in_list(big["id"]) == "Running", 60)
        status, small = self.api("POST", "/v1/jobs", spec("console-small", ["true"]))
        check(status == 201, f"submit: {status} {small}")
        line = wait_for("the waiting line in the list",
                        lambda: self.wd.text(f'#jobs-body tr[data-id="{small["id"]}"] .waiting'), 60)
        check("#1 of 1 in cpu" in line and "starts in" in line, f"the list's waiting line: {line!r}")
        self.wd.go(f"{self.base}/ui/job.html?id={small['id']}")
        why = wait_for("the waiting card", lambda: self.wd.text("#waiting .waiting-reason"), 30)
        check("(Resources)" in why and "become free" in why, f"why: {why!r}")
        place = self.wd.text("#waiting .waiting-place") or ""
        check(place.startswith("1 of 1 pending jobs in partition cpu"), f"place: {place!r}")
        start = self.wd.text("#waiting .waiting-start") or ""
        check(start.startswith("in ") and "Slurm's estimate" in start, f"start: {start!r}")
        self.shot("waiting")
        for job in (small, big):
            check(self.api("POST", f"/v1/jobs/{job['id']}/cancel")[0] == 202, "cancel")
        wait_for("the waiting card gone", lambda: not self.wd.find("#waiting section"), 60)
        wait_for("both cancelled", lambda: all(
            self.api("GET", f"/v1/jobs/{j['id']}")[1]["phase"] == "Cancelled" for j in (small, big)), 60)

    def hostile_spec_and_log_render_as_text(self):
        # The log of the job above holds HOSTILE_IMG and HOSTILE_SCRIPT as lines.
        log = self.wd.text("#log")
        check(HOSTILE_IMG in log and HOSTILE_SCRIPT in log, f"the hostile log lines are not shown as text: {log!r}")
        check(self.wd.js("return document.querySelectorAll('#log *').length;") == 0, "the log holds elements")
        self.not_pwned("job page (hostile log)")
        # A spec whose labels and env hold markup.
        hostile = spec("console-hostile", ["python3", "-c", "print('quiet')"],
                       labels={"note": HOSTILE_IMG, "team": "web"},
                       env={"PAYLOAD": HOSTILE_SCRIPT, "IMG": HOSTILE_IMG})
        status, job = self.api("POST", "/v1/jobs", hostile)
        check(status == 201, f"hostile submit: {status} {job}")
        self.wd.go(f"{self.base}/ui/job.html?id={job['id']}")
        wait_for("the hostile job's labels", lambda: HOSTILE_IMG in (self.wd.text("#job-labels") or ""), 30)
        shown_spec = wait_for("the spec", lambda: self.wd.text("#spec"), 15)
        # As submitted: the YAML's double-quoted strings (json.dumps) escape the quotes.
        check(json.dumps(HOSTILE_SCRIPT) in shown_spec and json.dumps(HOSTILE_IMG) in shown_spec,
              f"the spec is not shown as text: {shown_spec!r}")
        self.not_pwned("job page (hostile spec)")
        self.wd.go(self.base + "/")
        wait_for("the list", lambda: self.phase_in_list(job["id"]), 30)
        self.not_pwned("jobs list")

    def cancel_with_confirmation(self):
        ticker = "i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.5; done"
        status, job = self.api("POST", "/v1/jobs", spec("console-sleeper", ["sh", "-c", ticker]))
        check(status == 201, f"submit: {status} {job}")
        self.wd.go(f"{self.base}/ui/job.html?id={job['id']}")
        wait_for("Running", lambda: self.wd.text("#job-phase") == "Running", 60)
        # The log follows the running attempt: later ticks appear without a reload.
        def ticks():
            found = re.findall(r"tick (\d+)", self.wd.text("#log") or "")
            return int(found[-1]) if found else 0
        first = wait_for("the first ticks", ticks, 30)
        wait_for("later ticks (the log follows)", lambda: ticks() >= first + 4, 30)
        self.wd.click("#cancel")
        self.wd.element("#cancel-box:not([hidden]) #cancel-confirm")
        self.wd.click("#cancel-keep")  # the first answer is "no": nothing happens
        check(not self.api("GET", f"/v1/jobs/{job['id']}")[1]["cancel_requested"], "cancelled without confirmation")
        self.wd.click("#cancel")
        self.wd.click("#cancel-confirm")
        wait_for("Cancelled", lambda: self.wd.text("#job-phase") == "Cancelled", 60)
        _, after = self.api("GET", f"/v1/jobs/{job['id']}")
        check(after["phase"] == "Cancelled" and after["cancel_requested_by"] == "alice", f"job after cancel: {after['phase']}")

    def refused_spec_shows_errors_at_fields(self):
        self.wd.go(self.base + "/ui/submit.html")
        bad = spec(f"bad{HOSTILE_SCRIPT}", ["true"], nodes=2, cpus=0)
        self.wd.element("#spec-text")
        self.wd.js("const t = document.getElementById('spec-text'); t.value = arguments[0];", bad[:-1])
        self.wd.type("#spec-text", "\n")  # a real keystroke: the page validates on input
        wait_for("the errors", lambda: self.wd.find("#errors"), 30)
        lines = bad.split("\n")
        for field, key in (("metadata.name", "  name:"), ("spec.resources.pools[0].cpus", "        cpus:"),
                           ("spec.resources.pools[0].nodes", "        nodes:")):
            line = next(i for i, text in enumerate(lines) if text.startswith(key)) + 1
            at = self.wd.text(f'#spec-lines li[data-line="{line}"] li.field-error[data-field="{field}"]')
            check(at, f"no error for {field} at line {line}")
        message = self.wd.text('li.field-error[data-field="metadata.name"] .message')
        check(HOSTILE_SCRIPT in message, f"the refused name is not shown as text: {message!r}")
        check(self.wd.js("return document.getElementById('submit').disabled;"), "Submit is enabled for a refused spec")
        self.not_pwned("submit page")
        self.shot("submit")

    def field_lines_table(self):
        """web/js/spec_fields.js, the pure function that places an error at its line, from a
        table of cases, run in the browser on the module the server serves."""
        text = "\n".join([
            "apiVersion: tuneplane.io/v1",  # 0
            "kind: TrainingJob",            # 1
            "metadata:",                    # 2
            "  name: demo",                 # 3
            "spec:",                        # 4
            "  framework:",                 # 5
            "    env:",                     # 6
            "      A: '1'",                 # 7
            "  resources:",                 # 8
            "    pools:",                   # 9
            "    - name: a",                # 10
            "      nodes: 1",               # 11
            "    - name: b",                # 12
            "      # cpus: 4",              # 13
            "      cpus: 0",                # 14
            "    time_limit: 10m",          # 15
        ])
        cases = {"metadata.name": 3, "kind": 1, "spec.framework.env.A": 7,
                 "spec.resources.pools[0].nodes": 11, "spec.resources.pools[1].cpus": 14,
                 "spec.resources.pools[1].name": 12, "spec.resources.time_limit": 15,
                 # not in the text: the nearest ancestor that is
                 "spec.resources.pools[1].nodes": 12, "spec.resources.pools[2].cpus": 9,
                 "spec.retry.max_attempts": 4, "nope": -1, "": -1}
        json_text = '{\n  "metadata": {\n    "name": "x"\n  }\n}'
        script = ("const [text, fields, jsonText, done] = arguments;"
                  "import('/ui/js/spec_fields.js').then((m) => done({"
                  "  yaml: fields.map((f) => m.lineOfField(text, f)),"
                  "  json: m.lineOfField(jsonText, 'metadata.name')}))"
                  ".catch((e) => done(String(e)));")
        got = self.wd.s("POST", "/execute/async", {"script": script, "args": [text, list(cases), json_text]})
        check(isinstance(got, dict), f"spec_fields.js: {got}")
        wrong = {f: (line, want) for (f, want), line in zip(cases.items(), got["yaml"]) if line != want}
        check(not wrong, f"lineOfField (got, want): {wrong}")
        check(got["json"] == 2, f"lineOfField in JSON: {got['json']}")

    def valid_spec_submits_and_opens_the_job(self):
        self.wd.click("#example")
        wait_for("valid", lambda: self.wd.find("#valid-summary"), 30)
        self.wd.click("#submit:not([disabled])")
        wait_for("the new job's page", lambda: "/ui/job.html?id=hello-" in self.wd.s("GET", "/url"), 30)
        wait_for("its phase", lambda: self.wd.text("#job-phase"), 30)

    def admin_sees_all_and_site_checks(self):
        self.wd.click("#forget")
        self.sign_in(OPS, "ops")
        wait_for("alice's jobs in the admin's list", lambda: self.phase_in_list(self.hello), 30)
        owner = self.wd.text(f'#jobs-body tr[data-id="{self.hello}"] td:nth-child(6)')
        check(owner == "alice", f"owner column {owner!r}")
        title = self.wd.text("main h1")
        check(title == "All jobs", f"admin's title {title!r}")
        # The admin's own job, running while the list is shown, then cancelled.
        status, job = self.api("POST", "/v1/jobs", spec("nightly-eval", ["sleep", "300"]), token=OPS)
        check(status == 201, f"submit: {status} {job}")
        wait_for("the admin's job running", lambda: self.phase_in_list(job["id"]) == "Running", 60)
        owner = self.wd.text(f'#jobs-body tr[data-id="{job["id"]}"] td:nth-child(6)')
        check(owner == "ops", f"owner column {owner!r}")
        self.shot("jobs")
        check(self.api("POST", f"/v1/jobs/{job['id']}/cancel", token=OPS)[0] == 202, "cancel")
        self.wd.go(self.base + "/ui/site.html")
        wait_for("capabilities", lambda: "custom-demo" in (self.wd.text("#capabilities") or ""), 30)
        # The REST API version serve negotiated with the simulator (v0.0.45, as Slurm 26.05.3).
        api = self.wd.text("#slurm-api") or ""
        check("Slurm REST API v0.0.45 (chosen by slurm.api_version: auto from v0.0.45)" in api
              and "Slurm 26.05.3" in api, f"slurm api line {api!r}")
        wait_for("doctor's checks", lambda: self.wd.find("#doctor-checks tbody tr"), 60)
        checks = self.wd.text("#doctor-checks")
        check("slurmrestd" in checks and "artifact/custom-demo" in checks, f"doctor checks: {checks!r}")
        self.shot("site", full=True)

    def usage_counts_the_jobs_runs(self):
        # The admin's usage page, per TunePlane job: alice's first job, from slurmdbd's record
        # of its run (the simulator's --accounting), tied to it by its attempt directory.
        self.wd.go(self.base + "/ui/usage.html")
        wait_for("the usage table", lambda: self.wd.find("#usage-total"), 30)
        title = self.wd.text("main h1")
        check(title == "Usage: every user", f"usage title {title!r}")
        self.wd.js("const s = document.getElementById('usage-by'); s.value = 'job';"
                   "s.dispatchEvent(new Event('change'));")
        row = f'#usage-body tr[data-key="{self.hello}"]'
        wait_for("alice's job in the usage table", lambda: self.wd.find(row), 30)
        owner = self.wd.text(f"{row} td:nth-child(2)")
        check(owner == "alice", f"usage owner column {owner!r}")
        runs = self.wd.text(f"{row} td:nth-child(8)")
        check(runs.isdigit() and int(runs) >= 1, f"usage runs column {runs!r}")
        self.shot("usage")

    def token_never_in_a_url_or_log(self):
        url = self.wd.s("GET", "/url")
        stored = self.wd.js("return sessionStorage.getItem('tuneplane.token');")
        check(stored == OPS, "the token is not in session storage")
        logs = self.stack.read("serve", "out") + self.stack.read("serve", "err")
        for token in (ALICE, OPS):
            check(token not in url, "a token in the URL")
            check(token not in logs, "a token in serve's logs")
        check(self.wd.js("return localStorage.length;") == 0, "something in localStorage")

    def no_csp_violations(self):
        refused = [e["message"] for e in self.wd.browser_log()
                   if "Content Security Policy" in e.get("message", "") or "Refused to" in e.get("message", "")]
        check(not refused, f"the browser reported CSP violations: {refused}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tuneplane", required=True)
    p.add_argument("--slurmsim", required=True)
    p.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    p.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    p.add_argument("--screenshots", help="write list/job/submit/site PNGs into this directory")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = p.parse_args()
    for tool in (args.chromium, args.chromedriver):
        if not os.access(tool, os.X_OK):
            print(f"SKIP: {tool} is not installed (apt-get install chromium chromium-driver)")
            return 77
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    started = time.monotonic()
    stack = Stack(args)
    wd = None
    try:
        wd = WebDriver(stack.start())
        wd.start(args.chromium, os.path.join(stack.dir, "profile"))
        ConsoleTest(stack, wd, args.screenshots).run()
    except (Failure, AssertionError) as e:  # AssertionError: the stack did not start
        print(f"FAIL {e}", flush=True)
        if wd and wd.session:
            for entry in wd.browser_log()[-20:]:
                print(f"  browser: {entry.get('level')} {entry.get('message')}")
            try:
                wd.screenshot(os.path.join(stack.dir, "failure.png"))
                stack.keep = True
                print(f"  screenshot and logs kept in {stack.dir}")
            except Failure:
                pass
        print("  serve's log (tail):\n" + stack.read("serve", "err")[-3000:])
        return 1
    finally:
        if wd:
            wd.quit()
        problems = stack.stop()
    if problems:
        print("FAIL " + "\n".join(problems) + f"\n  logs kept in {stack.dir}", flush=True)
        return 1
    print(f"PASS console_browser_test in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
