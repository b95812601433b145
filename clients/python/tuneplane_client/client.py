"""The client of `tuneplane serve`'s /v1 API (docs/api.md), standard library only."""

import http.client
import json
import os
import socket
import ssl
import tempfile
import time
import urllib.parse
import uuid

from . import config as _config
from ._api import ROUTES, TRANSIENT_STATUSES
from .errors import SubmitOutcomeUnknown, TunePlaneError, WaitTimeout
from .spec import spec_body, with_workdir
from .workdir import READ_BOUND_BYTES, READ_BOUND_FILES, read_workdir, write_tar

# The CLI's submit retries (src/client/idempotent_submit.h): 0.5 s, doubled up to 8 s between
# tries, for at most 60 s from the first send.
SUBMIT_FIRST_WAIT = 0.5
SUBMIT_MAX_WAIT = 8.0
SUBMIT_BUDGET = 60.0
# How long wait() and logs(follow=True) ride over a server that is away (the CLI's grace).
UNREACHABLE_GRACE = 60.0

_CHUNK = 64 * 1024


class SubmittedJob(dict):
    """The job (the API's Job) that submit() returns; `replayed` is True when the server
    answered with the job its Idempotency-Key had already created (200), False when this
    request created it (201); `idempotency_key` is the key it was sent under."""

    replayed = False
    idempotency_key = None


class _Lost(Exception):
    """Sent, but no answer came back (the server may have acted on it)."""


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class Client:
    """A TunePlane server, as one token's user.

    Client() reads the server and token as the CLI does (TUNEPLANE_SERVER, TUNEPLANE_TOKEN,
    ~/.config/tuneplane/config.yaml); Client(server, token) names them. `timeout` bounds each
    request (connect and each read, in seconds). Answers are the API's JSON as dicts and lists;
    refusals raise TunePlaneError with the HTTP status and the API's code, field and message.
    One Client may be used from one thread at a time."""

    def __init__(self, server=None, token=None, *, timeout=30.0, ca_file=None,
                 submit_first_wait=SUBMIT_FIRST_WAIT, submit_max_wait=SUBMIT_MAX_WAIT,
                 submit_budget=SUBMIT_BUDGET, unreachable_grace=UNREACHABLE_GRACE,
                 _sleep=time.sleep, _clock=time.monotonic):
        self.server, self._token, env_ca = _config.resolve(server, token)
        self.timeout = timeout
        self.submit_first_wait = submit_first_wait
        self.submit_max_wait = submit_max_wait
        self.submit_budget = submit_budget
        self.unreachable_grace = unreachable_grace
        self._sleep, self._clock = _sleep, _clock
        parsed = urllib.parse.urlsplit(self.server)
        self._scheme = parsed.scheme.lower()
        if self._scheme == "unix":
            self._unix_path, self._netloc, self._base_path = parsed.path, None, ""
        else:
            self._unix_path, self._netloc = None, parsed.netloc
            self._base_path = parsed.path.rstrip("/")
        self._ssl = None
        if self._scheme == "https":
            self._ssl = ssl.create_default_context(cafile=ca_file or env_ca)

    def __repr__(self):  # never the token
        return f"Client({self.server!r})"

    # ---- transport ----------------------------------------------------------------------

    def _connection(self):
        if self._unix_path is not None:
            return _UnixConnection(self._unix_path, self.timeout)
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._netloc, timeout=self.timeout,
                                               context=self._ssl)
        return http.client.HTTPConnection(self._netloc, timeout=self.timeout)

    def _url(self, operation, path_params=None, query=None):
        _, template, allowed = ROUTES[operation]
        path = template
        for name, value in (path_params or {}).items():
            assert name in allowed, (operation, name)
            path = path.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
        target = self._base_path + path
        if query:
            pairs = []
            for name, value in query.items():
                if value is None:
                    continue
                assert name in allowed, (operation, name)
                pairs.append((name, str(value)))
            if pairs:
                target += "?" + urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote,
                                                       safe="/")
        return target

    def _open(self, operation, path_params=None, query=None, body=None, headers=None):
        """Sends the request; returns (connection, response) with the body still unread.
        Raises TunePlaneError(client.unreachable) when nothing was sent, _Lost when it was
        sent and no answer came."""
        method = ROUTES[operation][0]
        target = self._url(operation, path_params, query)
        all_headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json",
                       "Connection": "close", "User-Agent": "tuneplane-python-client"}
        all_headers.update(headers or {})
        conn = self._connection()
        try:
            conn.connect()
        except (OSError, ssl.SSLError) as e:
            conn.close()
            raise TunePlaneError(None, "client.unreachable", "server",
                                 f"cannot reach {self.server}: {_describe(e)}") from None
        try:
            conn.request(method, target, body=body, headers=all_headers)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise _Lost(f"{method} {ROUTES[operation][1]} to {self.server}: no answer "
                        f"({_describe(e)})") from None
        return conn, response

    def _call(self, operation, path_params=None, query=None, body=None, headers=None,
              with_response=False):
        """The answer's JSON (and the response, for its headers), or TunePlaneError."""
        try:
            conn, response = self._open(operation, path_params, query, body, headers)
            try:
                raw = response.read()
            except (OSError, http.client.HTTPException) as e:
                raise _Lost(f"{self.server}: the answer broke off ({_describe(e)})") from None
            finally:
                conn.close()
        except _Lost as lost:
            raise TunePlaneError(None, "client.no_answer", "", str(lost)) from None
        data = _decode(response, raw)
        return (data, response) if with_response else data

    # ---- jobs ---------------------------------------------------------------------------

    def submit(self, spec, *, idempotency_key=None, workdir=None):
        """Submits a TrainingJob spec (a dict, sent as JSON; YAML or JSON text; or a
        pathlib.Path) and returns the job (a SubmittedJob: a dict with .replayed and
        .idempotency_key). With `workdir` (a folder), the folder is uploaded first
        (upload_workdir) and the spec sent names it (spec.workdir; a copy of the dict, yours
        is left as it is): the job sees it read-only at /workdir ($TUNEPLANE_WORKDIR). That
        takes a dict spec (TypeError for text); the same folder gives the same spec, so the
        submit stays idempotent. Idempotent: the request carries an Idempotency-Key (a fresh one,
        or `idempotency_key`); when its answer is lost (a dropped connection, a timeout, 502,
        503, 504, 429) it is sent again under the same key — 0.5 s, 1 s, 2 s … at most 8 s
        apart, for up to 60 s — so whichever try the server took, there is one job. Raises
        SubmitOutcomeUnknown (naming the key) when the server stays away after a lost answer,
        TunePlaneError for a refusal (422 with every problem in .errors; 409
        control.idempotency_key_reused when the key was used with another spec)."""
        if workdir is not None:
            if not isinstance(spec, dict):
                raise TypeError(
                    "submit(workdir=...) needs the spec as a dict; for YAML or JSON text, call "
                    "upload_workdir(folder) and write `workdir: <the reference>` under `spec:` "
                    "yourself")
            spec = with_workdir(spec, self.upload_workdir(workdir))
        body, content_type = spec_body(spec)
        key = idempotency_key or uuid.uuid4().hex
        headers = {"Content-Type": content_type, "Idempotency-Key": key}
        start = self._clock()
        wait = self.submit_first_wait
        answer_lost = False
        while True:
            try:
                data, response = self._call("submitJob", body=body, headers=headers,
                                            with_response=True)
                job = SubmittedJob(data)
                job.replayed = (response.status == 200 and
                                (response.getheader("Idempotent-Replayed") or "") == "true")
                job.idempotency_key = key
                return job
            except TunePlaneError as error:
                if error.code == "client.no_answer":
                    answer_lost = True
                elif error.code == "client.unreachable":
                    # Not sent: before any lost answer it proves nothing was created; after
                    # one, the server is restarting — ask again.
                    if not answer_lost:
                        raise
                elif error.status not in TRANSIENT_STATUSES:
                    raise
                if self._clock() - start + wait > self.submit_budget:
                    if answer_lost:
                        raise SubmitOutcomeUnknown(key, error) from None
                    raise
                self._sleep(wait)
                wait = min(wait * 2, self.submit_max_wait)

    def upload_workdir(self, folder, *, max_bytes=None, max_files=None):
        """Uploads a code folder (POST /v1/workdirs) as `tuneplane submit --workdir` does and
        returns its reference, "sha256:<hex>" (what spec.workdir holds). The folder is read
        and checked here first: a link out of it, a dangling link or one to a folder, a
        device, FIFO or socket, a path ustar cannot hold, or more than `max_bytes` of files
        or `max_files` files and folders (the site's server.workdir_max_bytes and _files, when
        you know them; else the largest any site may set, as the CLI) raise WorkdirError
        naming the path and the rule, and nothing is sent. Over the site's own limits, the
        server refuses it (TunePlaneError 413, workdir.too_large or too_many_files, naming
        the limit). A link to a file inside is sent as the file. Idempotent by content (the
        same folder is the same upload), so it is sent again when its answer is lost, as
        submit is."""
        tree = read_workdir(folder, READ_BOUND_BYTES if max_bytes is None else max_bytes,
                            READ_BOUND_FILES if max_files is None else max_files)
        archive = write_tar(tree)
        headers = {"Content-Type": "application/x-tar"}
        start = self._clock()
        wait = self.submit_first_wait
        while True:
            try:
                stored = self._call("uploadWorkdir", body=archive, headers=headers)
                break
            except TunePlaneError as error:
                if not error.transient or self._clock() - start + wait > self.submit_budget:
                    raise
                self._sleep(wait)
                wait = min(wait * 2, self.submit_max_wait)
        if stored.get("sha256") != tree.sha256:
            raise TunePlaneError(None, "client.workdir_mismatch", "workdir",
                                 f"the server stored {folder} as {stored.get('workdir')}, "
                                 f"the client hashed it as {tree.reference}")
        return tree.reference

    def get(self, job_id):
        """The job (the API's Job: its spec, every attempt with its components)."""
        return self._call("getJob", {"id": job_id})

    def list(self, *, phase=None, name=None, label=None, owner=None, limit=None):
        """The caller's jobs (an admin's: everyone's, or owner's), newest first, every page:
        items as the API's JobListItem. `label` is "KEY=VALUE"; `limit` caps the total."""
        items, token = [], None
        while True:
            page_size = None if limit is None else max(1, min(1000, limit - len(items)))
            page = self._call("listJobs", query={"phase": phase, "name": name, "label": label,
                                                  "owner": owner, "limit": page_size,
                                                  "continue": token})
            items.extend(page["items"])
            token = page["continue"]
            if not token or (limit is not None and len(items) >= limit):
                return items if limit is None else items[:limit]

    def events(self, job_id):
        """Every phase change of the job and its attempts, oldest first."""
        return self._call("listJobEvents", {"id": job_id})["items"]

    def cancel(self, job_id):
        """Asks for the job to be cancelled (the job, cancel_requested true); the control loop
        ends it Cancelled. 409 store.already_terminal when it has ended."""
        return self._call("cancelJob", {"id": job_id}, body=b"")

    def wait(self, job_id, timeout=None, *, interval=1.0, max_interval=10.0):
        """Polls the job until its phase is terminal (Succeeded, Failed, Cancelled) and returns
        it; the pause between polls starts at `interval` and grows by half up to
        `max_interval`. Rides over a server that is away for up to 60 s. Raises WaitTimeout
        after `timeout` seconds (the job is not cancelled)."""
        start = self._clock()
        pause = interval
        away_since = None
        job = None
        while True:
            try:
                job = self.get(job_id)
                away_since = None
                if job["terminal"]:
                    return job
            except TunePlaneError as error:
                away_since = self._tolerate(error, away_since)
            now = self._clock()
            if timeout is not None and now - start >= timeout:
                raise WaitTimeout(job_id, timeout, job)
            step = pause if timeout is None else min(pause, max(0.0, start + timeout - now))
            self._sleep(step)
            pause = min(pause * 1.5, max_interval)

    def _tolerate(self, error, away_since):
        """While polling: re-raises `error` unless it is transient and the server has been
        away for less than unreachable_grace; returns since when it has been away."""
        if not error.transient:
            raise error
        away_since = away_since if away_since is not None else self._clock()
        if self._clock() - away_since > self.unreachable_grace:
            raise error
        return away_since

    # ---- logs ---------------------------------------------------------------------------

    def log_tail(self, job_id, *, attempt=None, stream="stdout", component=None):
        """The API's Logs: the tail of one component's stdout or stderr (at most 64 KiB and
        2,000 lines), the file's size in `bytes`, `missing_reason` while there is none."""
        return self._call("getJobLogs", {"id": job_id},
                          {"stream": stream, "attempt": attempt, "component": component})

    def logs(self, job_id, attempt=None, follow=False, *, stream="stdout", component=None,
             interval=1.0, timeout=None):
        """The log's tail as text (the latest attempt unless `attempt`); with follow=True an
        iterator of new text, polled every `interval` s, that ends once the attempt has ended
        and its last output was read (the attempt is the latest at the first poll unless
        named). Raises WaitTimeout after `timeout` s of following."""
        if not follow:
            return self.log_tail(job_id, attempt=attempt, stream=stream,
                                 component=component)["content"]
        return self._follow(job_id, attempt, stream, component, interval, timeout)

    def _follow(self, job_id, attempt, stream, component, interval, timeout):
        # As the CLI (src/client/log_follow.h): each poll returns the log's tail window and
        # the file's size, so the window starts at bytes - len(content); only what lies past
        # what was shown is new. A log that got shorter was replaced: shown anew.
        start = self._clock()
        shown = None
        away_since = None
        while True:
            try:
                job = self.get(job_id)
                attempts = job["attempts"]
                if attempt is None and attempts:
                    attempt = attempts[-1]["number"]
                current = next((a for a in attempts if a["number"] == attempt), None)
                ended = current is not None and current["terminal"]
                if current is not None:
                    window = self.log_tail(job_id, attempt=attempt, stream=stream,
                                           component=component)
                    content = window["content"].encode("utf-8")
                    size = window["bytes"]
                    begins = max(0, size - len(content))
                    if shown is None or size < shown or begins > shown:
                        new = content
                    else:
                        new = content[shown - begins:]
                    if window["missing_reason"] is None:
                        shown = size
                    if new:
                        yield new.decode("utf-8", errors="replace")
                    if ended:
                        return
                elif job["terminal"]:
                    return  # ended before any attempt
                away_since = None
            except TunePlaneError as error:
                away_since = self._tolerate(error, away_since)
            if timeout is not None and self._clock() - start >= timeout:
                raise WaitTimeout(job_id, timeout)
            self._sleep(interval)

    # ---- files --------------------------------------------------------------------------

    def ls(self, job_id, path="", attempt=None, *, area="output"):
        """The entries (the API's FileEntry: name, path, path_encoded, type, size, modified)
        of a folder of the job's outputs: `path` in the attempt's output/ (the latest unless
        `attempt`), or with area="checkpoints" in the job's checkpoints/. Every page, in the
        directory's own order."""
        items, token = [], None
        while True:
            page = self._call("listJobFiles", {"id": job_id},
                              {"area": area, "attempt": attempt, "path": path or None,
                               "limit": 1000, "continue": token})
            items.extend(page["items"])
            token = page["continue"]
            if not token:
                return items

    def download(self, job_id, path, dest=".", attempt=None, *, area="output"):
        """Copies one file of the job's outputs to `dest` (a file name, or a folder to put it
        in under its own name), byte for byte, through a temporary file renamed into place;
        returns the local path. Links, special files and folders are refused (409)."""
        if os.path.isdir(dest):
            dest = os.path.join(dest, path.rstrip("/").rsplit("/", 1)[-1])
        query = {"area": area, "attempt": attempt, "path": path}
        try:
            conn, response = self._open("getJobFileContent", {"id": job_id}, query,
                                        headers={"Accept": "application/octet-stream"})
        except _Lost as lost:
            raise TunePlaneError(None, "client.no_answer", "", str(lost)) from None
        try:
            if response.status != 200:
                _decode(response, response.read())
                raise TunePlaneError(response.status, "client.bad_response", "",
                                     f"a download answered {response.status}")
            folder = os.path.dirname(os.path.abspath(dest))
            fd, partial = tempfile.mkstemp(prefix=".tuneplane-", dir=folder)
            try:
                with os.fdopen(fd, "wb") as out:
                    while True:
                        chunk = response.read(_CHUNK)
                        if not chunk:
                            break
                        out.write(chunk)
                length = response.getheader("Content-Length")
                if length is not None and os.path.getsize(partial) != int(length):
                    raise TunePlaneError(None, "client.no_answer", "",
                                         f"the download of {path} broke off")
                os.replace(partial, dest)
            except BaseException:
                try:
                    os.unlink(partial)
                except OSError:
                    pass
                raise
        except (OSError, http.client.HTTPException) as e:
            raise TunePlaneError(None, "client.no_answer", "",
                                 f"the download of {path} broke off ({_describe(e)})") from None
        finally:
            conn.close()
        return dest

    # ---- the site -----------------------------------------------------------------------

    def validate(self, spec):
        """Has the server judge a spec as submit would, storing nothing: the API's
        ValidationSummary; a refused spec raises TunePlaneError (422) with every problem in
        .errors, each with its code and field."""
        body, content_type = spec_body(spec)
        return self._call("validateSpec", body=body, headers={"Content-Type": content_type})

    def capabilities(self):
        """What the site offers: runtimes, GPU series, partitions, limits, features."""
        return self._call("getCapabilities")

    def whoami(self):
        """The token's user: user, admin, slurm_accounts, qos."""
        return self._call("whoami")


def _describe(error):
    text = str(error) or type(error).__name__
    return text if type(error).__name__ in text else f"{type(error).__name__}: {text}"


def _decode(response, raw):
    """The answer's JSON, or TunePlaneError for a 4xx/5xx (the API's errors[])."""
    try:
        data = json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError):
        data = None
    if response.status >= 400:
        errors = data.get("errors") if isinstance(data, dict) else None
        if isinstance(errors, list) and errors and all(isinstance(e, dict) for e in errors):
            first = errors[0]
            raise TunePlaneError(response.status, first.get("code", "client.http_error"),
                                 first.get("field", ""), first.get("message", ""), errors)
        raise TunePlaneError(response.status, "client.http_error", "",
                             f"HTTP {response.status} {response.reason}")
    if data is None:
        raise TunePlaneError(response.status, "client.bad_response", "",
                             "the answer is not the API's JSON (is the server a TunePlane "
                             "server?)")
    return data
