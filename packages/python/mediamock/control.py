"""A small typed client of mediamock's control API (``/_mock``) and of the
service's API (``/api/v1``), with the standard library only.

The shapes below are the control API's (control.json) that tests use most;
every other path is reachable with :meth:`ControlClient.call`."""
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, TypedDict, Union

from ._errors import MediamockError


class Health(TypedDict):
    status: str
    clock: str
    now: str


class SandboxToken(TypedDict):
    token: str
    masked: str
    type: str
    name: str
    scopes: List[str]


class Sandbox(TypedDict):
    """``POST /_mock/sandboxes``'s answer."""
    id: str
    object: str
    name: str
    workspace_id: int
    keys: Dict[str, str]
    api_key: str
    tokens: List[SandboxToken]
    control_token: str
    base_url: str
    mcp_url: str
    control_url: str
    plan: str
    credits_balance: int
    rate_limit_per_minute: int
    created_at: str


#: What a sandbox starts as; every field is optional (``from``: a fixture workspace's name).
SandboxSpec = TypedDict("SandboxSpec", {
    "name": str,
    "from": str,
    "plan": str,
    "credits": int,
    "rate_limit_per_minute": int,
    "monthly_gifts": List[Dict[str, Any]],
    "keys": List[Dict[str, Any]],
    "empty_library": bool,
}, total=False)


class FailRule(TypedDict, total=False):
    """Which jobs fail and how (``count`` is required)."""
    count: int
    modality: Literal["image", "video", "audio", "3d", "encore"]
    model: str
    stage: Literal["queued", "processing"]
    code: str


class ForcedResponse(TypedDict, total=False):
    operation: str  # an operation id (getAccount, createGeneration, ...) or "*"
    status: Literal[429, 500, 503]
    count: int


class FixtureKey(TypedDict):
    """A test credential of the fixtures (``mockserver keys`` lists them)."""
    token: str
    type: str
    name: str
    scopes: List[str]
    workspace: str
    workspace_id: int
    plan: str


@dataclass
class Response:
    """An HTTP answer: ``body`` is the parsed JSON, or the raw bytes of anything else."""
    status: int
    headers: Mapping[str, str]
    body: Any

    @property
    def ok(self):
        return 200 <= self.status < 300

    @property
    def error_code(self):
        """The error's code (``rate_limited``, ...) of a JSON error answer, else None."""
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return self.body["error"].get("code")
        return None


def request(method, url, body=None, token=None, content_type="application/json", timeout=70.0):
    # type: (str, str, Any, Optional[str], str, float) -> Response
    """Makes a request: a dict or list body goes as JSON, bytes as they are."""
    headers = {"Accept": "application/json"}
    data = None
    if token:
        headers["Authorization"] = "Bearer " + token
    if body is not None:
        data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
        headers["Content-Type"] = content_type
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, hdrs, raw = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        status, hdrs, raw = err.code, err.headers, err.read()
    if hdrs.get("Content-Type", "").startswith("application/json") and raw:
        return Response(status, hdrs, json.loads(raw))
    return Response(status, hdrs, raw)


class ApiClient:
    """The service's API (``/api/v1``) with one bearer key."""

    def __init__(self, base_url, key):
        # type: (str, str) -> None
        self.base_url = base_url.rstrip("/")
        self.key = key

    def call(self, method, path, body=None, key=None, content_type="application/json", **query):
        # type: (str, str, Any, Optional[str], str, Any) -> Response
        """Calls a path (``/generations/61``) with query parameters as keywords; a dict
        body goes as JSON, bytes as they are with ``content_type``."""
        url = self.base_url + path
        if query:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(query)
        return request(method, url, body, token=key or self.key, content_type=content_type)

    def get(self, path, key=None, **query):
        # type: (str, Optional[str], Any) -> Response
        return self.call("GET", path, key=key, **query)

    def post(self, path, body=None, key=None, content_type="application/json", **query):
        # type: (str, Any, Optional[str], str, Any) -> Response
        return self.call("POST", path, body if body is not None else {}, key=key, content_type=content_type, **query)

    def upload(self, data, filename, mime_type="image/png", key=None):
        # type: (bytes, str, str, Optional[str]) -> Response
        """POST /uploads as multipart, with one file part."""
        boundary = "mediamock" + os.urandom(12).hex()
        body = (("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
                 "Content-Type: %s\r\n\r\n" % (boundary, filename, mime_type)).encode()
                + data + ("\r\n--%s--\r\n" % boundary).encode())
        return self.call("POST", "/uploads", body, key=key, content_type="multipart/form-data; boundary=" + boundary)


class ControlClient:
    """The control API. Built with the server's control token (or none) it
    reaches the whole server; :meth:`for_sandbox` (a sandbox's control token)
    makes every call the sandbox's. A call that does not succeed raises
    MediamockError with what the server answered."""

    def __init__(self, control_url, token=None):
        # type: (str, Optional[str]) -> None
        self.control_url = control_url.rstrip("/")
        self.token = token

    def for_sandbox(self, sandbox):
        # type: (Union[Sandbox, Mapping[str, Any]]) -> ControlClient
        return ControlClient(self.control_url, sandbox["control_token"])

    def call(self, method, path, body=None, **query):
        # type: (str, str, Any, Any) -> Any
        """Calls any control path; a state change always sends a JSON body (``{}`` when none)."""
        return self._call(method, path, body, query, 30)

    def _call(self, method, path, body, query, timeout):
        # type: (str, str, Any, Dict[str, Any], float) -> Any
        url = self.control_url + path
        if query:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(query)
        if method != "GET" and body is None:
            body = {}
        try:
            res = request(method, url, body, token=self.token, timeout=timeout)
        except OSError as err:
            raise MediamockError("control_error", "%s %s: %s" % (method, url, err)) from err
        if not res.ok:
            raise MediamockError("control_error", "%s /_mock%s: %d %s %s" % (
                method, path, res.status, res.error_code or "", (res.body.get("error", {}).get("message", "")
                                                                 if isinstance(res.body, dict) else res.body[:300])))
        return res.body

    # -- health and clock
    def health(self):
        # type: () -> Health
        return self.call("GET", "/health")

    def clock(self):
        # type: () -> Dict[str, Any]
        return self.call("GET", "/clock")

    def advance_clock(self, duration):
        # type: (str) -> Dict[str, Any]
        """Moves the clock ("10m"); a sandbox may not (the clock is shared)."""
        return self.call("POST", "/clock/advance", {"duration": duration})

    def set_clock_mode(self, mode):
        # type: (Literal["real", "manual", "virtual"]) -> Dict[str, Any]
        return self.call("PUT", "/clock/mode", {"mode": mode})

    def resync_clock(self):
        # type: () -> Dict[str, Any]
        """Puts a real clock back on the wall clock, dropping what advances added."""
        return self.call("POST", "/clock/resync", {})

    # -- faults
    def faults(self):
        # type: () -> Dict[str, Any]
        return self.call("GET", "/faults")

    def clear_faults(self):
        # type: () -> Dict[str, Any]
        return self.call("DELETE", "/faults")

    def fail_next(self, count=1, **rule):
        # type: (int, Any) -> Dict[str, Any]
        """The next ``count`` matching jobs fail (``modality``, ``model``, ``stage``, ``code``)."""
        return self.call("POST", "/faults/fail-next", dict(rule, count=count))

    def set_failure_rate(self, rate):
        # type: (float) -> Dict[str, Any]
        return self.call("PUT", "/faults/failure-rate", {"rate": rate})

    def force_responses(self, operation, status, count=1, **answer):
        # type: (str, int, int, Any) -> Dict[str, Any]
        """The next ``count`` answers of an operation (``getAccount``, ``*``) are ``status``: any
        the operation declares, with the document's error code for it, or the ``code`` and
        ``message``, ``body`` or ``example`` given (``drift=True`` answers what the document
        does not allow, marked outside the contract)."""
        return self.call("POST", "/faults/responses", dict(answer, operation=operation, status=status, count=count))

    def set_latency(self, operation, ms):
        # type: (str, int) -> Dict[str, Any]
        return self.call("PUT", "/faults/latency/" + urllib.parse.quote(operation, safe="*"), {"ms": ms})

    def add_fault(self, kind, **spec):
        # type: (str, Any) -> Dict[str, Any]
        """Adds a fault rule of any kind of the fault kind table (``moderation``,
        ``output_failure``, ``account_disconnected``, ``truncate``, ...) with its targeting and
        parameters, and returns the rule (its ``id`` for ``delete_fault``)."""
        return self.call("POST", "/faults/rules", dict(spec, kind=kind))

    def delete_fault(self, rule_id):
        # type: (str) -> Dict[str, Any]
        return self.call("DELETE", "/faults/rules/" + urllib.parse.quote(rule_id))

    # -- one job's fate
    def fail_asset(self, asset_id, code=None):
        # type: (int, Optional[str]) -> Dict[str, Any]
        return self.call("POST", "/assets/%d/fail" % asset_id, {"code": code} if code else {})

    def complete_asset(self, asset_id):
        # type: (int) -> Dict[str, Any]
        return self.call("POST", "/assets/%d/complete" % asset_id)

    # -- inspection
    def journal(self, **query):
        # type: (Any) -> Dict[str, Any]
        return self.call("GET", "/journal", **query)

    def journal_seq(self):
        # type: () -> int
        """The number of the last recorded request: pass it as ``after`` to :meth:`await_request`."""
        return self.call("GET", "/journal", limit=1)["seq"]

    def await_request(self, timeout=10, after=None, **filters):
        # type: (float, Optional[int], Any) -> Dict[str, Any]
        """Waits until a request matching the filters (``operation``, ``method``, ``path``,
        ``status``, ``front``) and numbered after ``after`` (default: from now) is journaled,
        and returns its entry; raises MediamockError ``request_not_seen`` after ``timeout``
        seconds (at most 55). Instead of sleeping until the client has sent it."""
        query = dict(filters, timeout=timeout)
        if after is not None:
            query["after"] = after
        return self._call("GET", "/journal/wait", None, query, timeout + 30)

    def har(self, **query):
        # type: (Any) -> Dict[str, Any]
        """The scope's journal as an HTTP Archive (HAR 1.2), oldest first: each exchange with
        its headers, bodies and timings, and the mock's annotations (``_operation``,
        ``_fault``, ``_answerCut``, ``_findings``, ...), for DevTools, Charles, Insomnia,
        Postman or k6. Takes the journal's filters as keywords."""
        data = self._har(query).read()
        return json.loads(data)

    def save_har(self, path, **query):
        # type: (str, Any) -> int
        """Writes the scope's journal as HAR 1.2 to a file, as it comes (see :meth:`har`);
        returns the bytes written."""
        written = 0
        with self._har(query) as resp, open(path, "wb") as out:
            while True:
                chunk = resp.read(64 << 10)
                if not chunk:
                    return written
                out.write(chunk)
                written += len(chunk)

    def _har(self, query):
        # type: (Dict[str, Any]) -> Any
        query = dict({"limit": 100000}, **query)
        query["format"] = "har"
        url = self.control_url + "/journal?" + urllib.parse.urlencode(query)
        headers = {"Authorization": "Bearer " + self.token} if self.token else {}
        try:
            return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60)
        except urllib.error.HTTPError as err:
            raise MediamockError("control_error", "GET /_mock/journal?format=har: %d %s" % (
                err.code, err.read()[:300].decode("utf-8", "replace"))) from err
        except OSError as err:
            raise MediamockError("control_error", "GET %s: %s" % (url, err)) from err

    def coverage(self):
        # type: () -> Dict[str, Any]
        return self.call("GET", "/coverage")

    def report(self, fail_on=None, **query):
        # type: (Optional[Sequence[str]], Any) -> Dict[str, Any]
        """The client report of the scope: how its clients polled, spent the rate window,
        repeated paid creations, fetched files; each finding with a stable id, a severity, a
        count and the request ids that show it. ``fail_on`` (finding ids or severities) makes
        it ``failed``."""
        if fail_on:
            query["fail_on"] = ",".join(fail_on)
        return self.call("GET", "/report", **query)

    def assert_good_client(self, fail_on=("warning", "error")):
        # type: (Sequence[str]) -> None
        """Raises AssertionError, with each finding and its fix, when the report has a finding
        that matches ``fail_on`` (by default every warning and error)."""
        report = self.report(fail_on)
        if report["failed"]:
            res = request("GET", self.control_url + "/report?" + urllib.parse.urlencode(
                {"fail_on": ",".join(fail_on), "format": "text"}), None, token=self.token, timeout=30)
            text = res.body.decode("utf-8", "replace") if isinstance(res.body, bytes) else str(report["findings"])
            raise AssertionError("the client broke rules of good behaviour:\n" + text)

    def workspaces(self):
        # type: () -> List[Dict[str, Any]]
        return self.call("GET", "/workspaces")

    def workspace(self, workspace_id):
        # type: (int) -> Dict[str, Any]
        return self.call("GET", "/workspaces/%d" % workspace_id)

    def ledger(self, workspace_id):
        # type: (int) -> Dict[str, Any]
        return self.call("GET", "/workspaces/%d/ledger" % workspace_id)

    def save_snapshot(self, name, description=None):
        # type: (str, Optional[str]) -> Dict[str, Any]
        """Saves the scope's state on the server under ``name`` (the whole state, or the
        sandbox's), kept beside the state file across restarts."""
        body = {} if description is None else {"description": description}
        return self.call("PUT", "/snapshots/" + urllib.parse.quote(name), body)

    def snapshots(self):
        # type: () -> Dict[str, Any]
        """The scope's named snapshots (``data``), by name."""
        return self.call("GET", "/snapshots")

    def restore_snapshot(self, name):
        # type: (str) -> Dict[str, Any]
        """Puts the scope's state back as its snapshot ``name`` holds it (a sandbox's: that
        sandbox alone)."""
        return self.call("POST", "/snapshots/" + urllib.parse.quote(name) + "/restore")

    def delete_snapshot(self, name):
        # type: (str) -> Dict[str, Any]
        return self.call("DELETE", "/snapshots/" + urllib.parse.quote(name))

    def reset(self):
        # type: () -> Dict[str, Any]
        """Starts the whole server afresh from its fixtures (every sandbox goes)."""
        return self.call("POST", "/reset")

    # -- sandboxes
    def create_sandbox(self, spec=None, **fields):
        # type: (Optional[SandboxSpec], Any) -> Sandbox
        """A fresh workspace (Acme Studio's copy unless ``from`` says otherwise) with keys of its own.
        ``from`` is a Python keyword: pass it in ``spec`` or as ``from_``."""
        body = dict(spec or {}, **fields)
        if "from_" in body:
            body["from"] = body.pop("from_")
        return self.call("POST", "/sandboxes", body)

    def sandboxes(self):
        # type: () -> Dict[str, Any]
        return self.call("GET", "/sandboxes")

    def delete_sandbox(self, sandbox_id):
        # type: (str) -> Dict[str, Any]
        return self.call("DELETE", "/sandboxes/" + sandbox_id)

    def reset_sandbox(self, sandbox_id):
        # type: (str) -> Dict[str, Any]
        return self.call("POST", "/sandboxes/%s/reset" % sandbox_id)

    def run_sandbox(self, sandbox_id, limit="1h"):
        # type: (str, str) -> Dict[str, Any]
        """Applies now every event of the sandbox due within ``limit``: its jobs end without moving the clock."""
        return self.call("POST", "/sandboxes/%s/run" % sandbox_id, {"limit": limit})
