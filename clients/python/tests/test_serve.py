"""The client against a real `tuneplane serve` on the slurmrestd simulator (support.Stack):
submit → wait → Succeeded, logs (tail and follow), ls and download byte for byte, cancel,
validate's errors with their fields, capabilities, whoami, the Idempotency-Key (replay, 409 on
another body) and a submit whose answer is lost — once (one job) and for good (the error names
the key, which then settles it); code shipped with submit(workdir=) runs from /workdir, the
same folder is the same upload (also when an upload's answer is lost), a link out is refused
before anything is sent, and the server's limits are named. Skipped unless TUNEPLANE_BIN and
TUNEPLANE_SLURMSIM_BIN name the binaries (ctest sets them)."""

import hashlib
import os
import tempfile
import time
import unittest
import uuid

from support import ALICE_TOKEN, BOB_TOKEN, LosingProxy, Stack

from tuneplane_client import (Client, SubmitOutcomeUnknown, TunePlaneError, WaitTimeout,
                              WorkdirError, custom_job, spec_to_yaml)

TUNEPLANE = os.environ.get("TUNEPLANE_BIN")
SLURMSIM = os.environ.get("TUNEPLANE_SLURMSIM_BIN")
WAIT = 90  # seconds any one job may take on the simulator

WEIGHTS = bytes(range(256)) * 400 + b"tail"
WRITE_OUTPUTS = (
    "import os\n"
    "out = os.environ['TUNEPLANE_OUTPUT_DIR']\n"
    "os.makedirs(out + '/model')\n"
    f"open(out + '/model/weights.bin', 'wb').write(bytes(range(256)) * 400 + b'tail')\n"
    "open(out + '/result.txt', 'w').write('loss=0.042\\n')\n"
    "print('hello from python-client', os.environ['TUNEPLANE_JOB_ID'])\n")


def job(name, program, **kw):
    return custom_job(name, ["python3", "-c"], args=[program], runtime_id="custom-demo", **kw)


def unique(name):
    return f"{name}-{uuid.uuid4().hex[:8]}"


@unittest.skipUnless(TUNEPLANE and SLURMSIM, "TUNEPLANE_BIN and TUNEPLANE_SLURMSIM_BIN not set")
class ServeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = Stack(TUNEPLANE, SLURMSIM)
        try:
            cls.server = cls.stack.start()
        except BaseException:
            cls.stack.stop()
            raise
        cls.client = Client(cls.server, ALICE_TOKEN, timeout=20)

    @classmethod
    def tearDownClass(cls):
        problems = cls.stack.stop()
        if problems:
            raise AssertionError("; ".join(problems))

    def jobs_named(self, name):
        return self.client.list(name=name)

    def test_whoami_and_capabilities(self):
        me = self.client.whoami()
        self.assertEqual(me["user"], "alice")
        self.assertFalse(me["admin"])
        caps = self.client.capabilities()
        self.assertIn("custom-demo", [r["id"] for r in caps["runtimes"]])

    def test_a_wrong_token_is_refused(self):
        with self.assertRaises(TunePlaneError) as caught:
            Client(self.server, "not-a-token").whoami()
        self.assertEqual((caught.exception.status, caught.exception.code),
                         (401, "auth.invalid_token"))
        self.assertNotIn("not-a-token", str(caught.exception))

    def test_submit_wait_logs_ls_download(self):
        name = unique("py-outputs")
        submitted = self.client.submit(job(name, WRITE_OUTPUTS))
        self.assertFalse(submitted.replayed)
        job_id = submitted["id"]
        done = self.client.wait(job_id, timeout=WAIT, interval=0.2)
        self.assertEqual(done["phase"], "Succeeded", done)
        self.assertIn(f"hello from python-client {job_id}", self.client.logs(job_id))
        self.assertIn("hello from python-client", self.client.logs(job_id, attempt=1))

        entries = {e["path"]: e for e in self.client.ls(job_id)}
        self.assertEqual(entries["model"]["type"], "directory")
        self.assertEqual(entries["result.txt"]["type"], "file")
        inner = {e["path"]: e for e in self.client.ls(job_id, "model", attempt=1)}
        self.assertEqual(inner["model/weights.bin"]["size"], len(WEIGHTS))

        with tempfile.TemporaryDirectory() as local:
            saved = self.client.download(job_id, "model/weights.bin", local)
            self.assertEqual(saved, os.path.join(local, "weights.bin"))
            with open(saved, "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(),
                                 hashlib.sha256(WEIGHTS).hexdigest())
            named = self.client.download(job_id, "result.txt", os.path.join(local, "r.txt"), 1)
            with open(named, "rb") as f:
                self.assertEqual(f.read(), b"loss=0.042\n")
            self.assertEqual(sorted(os.listdir(local)), ["r.txt", "weights.bin"])  # no partial
            with self.assertRaises(TunePlaneError) as caught:
                self.client.download(job_id, "model", local)
            self.assertEqual((caught.exception.status, caught.exception.code),
                             (409, "files.is_directory"))
        with self.assertRaises(TunePlaneError) as caught:
            self.client.ls(job_id, "no-such-folder")
        self.assertEqual(caught.exception.code, "files.not_found")
        with self.assertRaises(TunePlaneError) as caught:
            self.client.ls(job_id, "../etc")
        self.assertEqual((caught.exception.status, caught.exception.code),
                         (400, "files.invalid_path"))

    def test_follow_logs_to_the_end(self):
        program = ("import time\nfor i in range(5):\n"
                   "    print('line', i, flush=True)\n    time.sleep(0.3)\n")
        job_id = self.client.submit(job(unique("py-follow"), program))["id"]
        text = "".join(self.client.logs(job_id, follow=True, interval=0.2, timeout=WAIT))
        self.assertEqual(text, "".join(f"line {i}\n" for i in range(5)))
        self.assertEqual(self.client.get(job_id)["phase"], "Succeeded")

    def test_cancel(self):
        job_id = self.client.submit(job(unique("py-cancel"), "import time\ntime.sleep(300)\n"))["id"]
        with self.assertRaises(WaitTimeout) as caught:  # waiting never cancels
            self.client.wait(job_id, timeout=0.5, interval=0.2)
        self.assertIn(job_id, str(caught.exception))
        self.assertFalse(self.client.get(job_id)["cancel_requested"])
        answer = self.client.cancel(job_id)
        self.assertTrue(answer["cancel_requested"])
        self.assertEqual(self.client.wait(job_id, timeout=WAIT, interval=0.2)["phase"],
                         "Cancelled")
        self.assertEqual(self.client.cancel(job_id)["phase"], "Cancelled")  # idempotent
        ended = self.client.submit(job(unique("py-ended"), "print(1)\n"))["id"]
        self.assertEqual(self.client.wait(ended, timeout=WAIT, interval=0.2)["phase"],
                         "Succeeded")
        with self.assertRaises(TunePlaneError) as caught:
            self.client.cancel(ended)
        self.assertEqual((caught.exception.status, caught.exception.code),
                         (409, "store.already_terminal"))

    def test_not_found_and_other_users_jobs(self):
        job_id = self.client.submit(job(unique("py-mine"), "print(1)\n"))["id"]
        for who in (Client(self.server, BOB_TOKEN), self.client):
            with self.assertRaises(TunePlaneError) as caught:
                who.get(job_id if who is not self.client else "no-such-job-1234")
            self.assertEqual((caught.exception.status, caught.exception.code),
                             (404, "api.not_found"))

    def test_validate(self):
        good = job(unique("py-valid"), "print(1)\n", retry_on="never")
        summary = self.client.validate(good)
        self.assertTrue(summary["valid"])
        bad = job(unique("py-bad"), "print(1)\n")
        bad["spec"]["framework"]["runtime_id"] = "no-such-runtime"
        bad["spec"]["resources"]["pools"][0]["nodes"] = 0
        with self.assertRaises(TunePlaneError) as caught:
            self.client.validate(bad)
        e = caught.exception
        self.assertEqual(e.status, 422)
        fields = {x["field"]: x["code"] for x in e.errors}
        self.assertIn("spec.framework.runtime_id", fields, e.errors)
        self.assertIn("spec.resources.pools[0].nodes", fields, e.errors)
        self.assertIn("custom-demo", " ".join(x["message"] for x in e.errors))  # what exists
        with self.assertRaises(TunePlaneError) as caught:
            self.client.submit(bad)
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(self.jobs_named(bad["metadata"]["name"]), [])

    def code_folder(self, files):
        root = tempfile.mkdtemp(prefix="tuneplane-pycode-", dir=self.stack.dir)
        for path, content in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(content)
        return root

    def test_submit_with_a_workdir_runs_the_shipped_code(self):
        code = self.code_folder({
            "train.py": "import os, pathlib\n"
                        "here = pathlib.Path(os.environ['TUNEPLANE_WORKDIR'])\n"
                        "print('trained with', (here / 'lib' / 'config.txt').read_text().strip())\n",
            "lib/config.txt": "lr=0.1\n"})
        spec = custom_job(unique("py-workdir"), ["python3", "/workdir/train.py"],
                          runtime_id="custom-demo")
        submitted = self.client.submit(spec, workdir=code)
        self.assertNotIn("workdir", spec["spec"])  # the caller's dict is left as it was
        done = self.client.wait(submitted["id"], timeout=WAIT)
        self.assertEqual(done["phase"], "Succeeded", done)
        self.assertIn("trained with lr=0.1", self.client.logs(submitted["id"]))
        reference = self.client.upload_workdir(code)
        self.assertEqual(done["workdir"]["reference"], reference)
        self.assertEqual(done["workdir"]["path"], "/workdir")

    def test_the_same_folder_is_the_same_upload(self):
        code = self.code_folder({"train.py": "print('same')\n"})
        first = self.client.upload_workdir(code)
        self.assertRegex(first, r"^sha256:[0-9a-f]{64}$")
        self.assertEqual(self.client.upload_workdir(code), first)
        # A text spec cannot be given the folder: the caller names the upload.
        with self.assertRaises(TypeError):
            self.client.submit(spec_to_yaml(job(unique("py-text"), "print(1)")), workdir=code)

    def test_a_link_out_of_the_folder_is_refused_before_sending(self):
        code = self.code_folder({"train.py": "print(1)\n"})
        os.symlink("/etc/hostname", os.path.join(code, "host.txt"))
        proxy = LosingProxy(self.server, match=b"POST /v1/workdirs ", lose=0)
        try:
            with self.assertRaises(WorkdirError) as caught:
                Client(proxy.url, ALICE_TOKEN, timeout=20).submit(
                    job(unique("py-link"), "print(1)"), workdir=code)
            self.assertEqual(proxy.seen, 0)
        finally:
            proxy.close()
        self.assertEqual(caught.exception.code, "workdir.symlink")
        self.assertIn("'host.txt'", caught.exception.message)
        self.assertIn("outside the folder", caught.exception.message)

    def test_an_upload_whose_answer_is_lost_is_sent_again(self):
        code = self.code_folder({"train.py": "print('lost once')\n"})
        proxy = LosingProxy(self.server, match=b"POST /v1/workdirs ", lose=1)
        try:
            client = Client(proxy.url, ALICE_TOKEN, timeout=20, submit_first_wait=0.05)
            self.assertEqual(client.upload_workdir(code), self.client.upload_workdir(code))
            self.assertEqual((proxy.seen, proxy.lost), (2, 1))
        finally:
            proxy.close()

    def test_the_servers_limits_refuse_a_folder_over_them(self):
        # The site's limits are the default 64 MiB and 2000 entries; a folder of 2001.
        code = self.code_folder({f"f{i}.py": "" for i in range(2001)})
        with self.assertRaises(TunePlaneError) as caught:
            self.client.upload_workdir(code)
        self.assertEqual((caught.exception.status, caught.exception.code),
                         (413, "workdir.too_many_files"))
        self.assertIn("server.workdir_max_files", caught.exception.message)

    def test_yaml_written_by_spec_to_yaml_keeps_retry_on(self):
        # The complaint: PyYAML writes `on:` as `true:` (spec.retry.true: unknown
        # field). spec_to_yaml's text reads back with the key `on`, as the server shows.
        spec = job(unique("py-yaml"), "print('yaml')\n", retry_on="never",
                   env={"ANSWER": "yes", "N": "010"})
        text = spec_to_yaml(spec)
        self.assertTrue(self.client.validate(text)["valid"])
        submitted = self.client.submit(text)
        self.assertEqual(submitted["spec"], text)  # stored as sent
        self.assertEqual(self.client.wait(submitted["id"], timeout=WAIT, interval=0.2)["phase"],
                         "Succeeded")
        refused = text.replace('"on": never', "true: never")
        with self.assertRaises(TunePlaneError) as caught:
            self.client.validate(refused)
        self.assertEqual(caught.exception.field, "spec.retry.true")

    def test_idempotency_key_replays_and_refuses_another_body(self):
        key = "py-" + uuid.uuid4().hex
        name = unique("py-key")
        first = self.client.submit(job(name, "print(1)\n"), idempotency_key=key)
        again = self.client.submit(job(name, "print(1)\n"), idempotency_key=key)
        self.assertEqual((first.replayed, again.replayed), (False, True))
        self.assertEqual(again["id"], first["id"])
        self.assertEqual(again.idempotency_key, key)
        with self.assertRaises(TunePlaneError) as caught:
            self.client.submit(job(name, "print(2)\n"), idempotency_key=key)
        e = caught.exception
        self.assertEqual((e.status, e.code), (409, "control.idempotency_key_reused"))
        self.assertIn(first["id"], e.message)
        self.assertEqual([j["id"] for j in self.jobs_named(name)], [first["id"]])

    def test_submit_survives_a_lost_answer(self):
        proxy = LosingProxy(self.server, lose=1)
        try:
            waits = []
            through = Client(proxy.url, ALICE_TOKEN, timeout=20,
                             _sleep=lambda s: (waits.append(s), time.sleep(s)))
            name = unique("py-lost")
            submitted = through.submit(job(name, "print('once')\n"))
            self.assertEqual((proxy.seen, proxy.lost), (2, 1))
            self.assertEqual(waits, [0.5])
            self.assertTrue(submitted.replayed)  # the first try created it
            jobs = self.jobs_named(name)
            self.assertEqual([j["id"] for j in jobs], [submitted["id"]])
            self.assertEqual(self.client.wait(submitted["id"], timeout=WAIT,
                                              interval=0.2)["phase"], "Succeeded")
        finally:
            proxy.close()

    def test_a_submit_whose_answer_stays_lost_names_its_key(self):
        proxy = LosingProxy(self.server, lose=-1)
        try:
            through = Client(proxy.url, ALICE_TOKEN, timeout=20, submit_first_wait=0.1,
                             submit_max_wait=0.2, submit_budget=1.0)
            name = unique("py-gone")
            spec = job(name, "print('gone')\n")
            with self.assertRaises(SubmitOutcomeUnknown) as caught:
                through.submit(spec)
            key = caught.exception.idempotency_key
            self.assertIn(key, str(caught.exception))
            self.assertGreaterEqual(proxy.lost, 3)
            # Every try carried one key: one job, which the key then names.
            jobs = self.jobs_named(name)
            self.assertEqual(len(jobs), 1)
            settled = self.client.submit(spec, idempotency_key=key)
            self.assertTrue(settled.replayed)
            self.assertEqual(settled["id"], jobs[0]["id"])
        finally:
            proxy.close()


if __name__ == "__main__":
    unittest.main()
