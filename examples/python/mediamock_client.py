"""A small client of mediamock for the examples: the service's API and the
mock's control API, with the standard library only."""
import json
import os
import urllib.error
import urllib.request

ROOT = os.environ.get("MEDIAMOCK_URL", "http://127.0.0.1:8080").rstrip("/")
API = ROOT + "/api/v1"


def request(method, url, body=None, key=None, content_type="application/json"):
    """Makes a request; returns (status, headers, parsed JSON or raw bytes)."""
    data = None
    headers = {}
    if key:
        headers["Authorization"] = "Bearer " + key
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers["Content-Type"] = content_type
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=70) as resp:
            status, hdrs, raw = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        status, hdrs, raw = err.code, err.headers, err.read()
    if hdrs.get("Content-Type", "").startswith("application/json"):
        return status, hdrs, json.loads(raw)
    return status, hdrs, raw


def control(method, path, body=None, token=None, want=200):
    """Calls the mock's control API (JSON on every state change), with a
    sandbox's control token when given: the call is then the sandbox's."""
    if method != "GET" and body is None:
        body = {}
    status, _, out = request(method, ROOT + "/_mock" + path, body, key=token)
    assert status == want, (path, status, out)
    return out


def new_sandbox(**spec):
    """Creates a sandbox: a fresh workspace started as a fixture workspace
    (Acme Studio unless spec says "from"), with keys of its own."""
    return control("POST", "/sandboxes", spec, want=201)


