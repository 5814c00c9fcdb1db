"""Failure paths a Python client must survive, met with the standard
library's urllib: a connection reset, a body cut short, a download resumed
with Range, an expired file address. Each test works in a sandbox of its
own, so the faults touch nobody else:

    MEDIAMOCK_URL=http://127.0.0.1:8080 python3 -m unittest -v test_faults.py
"""
import http.client
import unittest
import urllib.error
import urllib.request

from mediamock_client import API, control, new_sandbox, request


def get(url, key=None, headers=None):
    """A GET that lets the fault through: returns (status, body) or raises."""
    req = urllib.request.Request(url, headers=dict(headers or {}))
    if key:
        req.add_header("Authorization", "Bearer " + key)
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, resp.read()


class FailurePaths(unittest.TestCase):
    def setUp(self):
        self.sandbox = new_sandbox(name=self.id())
        self.key, self.token = self.sandbox["api_key"], self.sandbox["control_token"]

    def tearDown(self):
        control("DELETE", "/sandboxes/" + self.sandbox["id"])

    def rule(self, spec):
        return control("POST", "/faults/rules", spec, token=self.token, want=201)

    def completed_asset(self, modality, model):
        status, _, created = request("POST", API + "/generations",
                                     {"modality": modality, "model_id": model, "prompt": "a failure path"}, key=self.key)
        self.assertEqual(status, 201, created)
        control("POST", "/sandboxes/%s/run" % self.sandbox["id"], {"limit": "1h"}, token=self.token)
        asset_id = created["assets"][0]["id"]
        return asset_id, request("GET", "%s/assets/%d" % (API, asset_id), key=self.key)[2]["assets"][0]["url"]

    def test_reset_and_truncate_on_one_request(self):
        with self.assertRaises(ConnectionResetError):
            get(API + "/account", self.key, {"Mock-Fault": "reset"})
        with self.assertRaises(http.client.IncompleteRead):
            get(API + "/account", self.key, {"Mock-Fault": "truncate; after_bytes=10"})
        with self.assertRaises(http.client.RemoteDisconnected):
            get(API + "/account", self.key, {"Mock-Fault": "empty_reply"})
        status, _ = get(API + "/account", self.key)
        self.assertEqual(status, 200, "the next request is answered")
        faults = [e.get("fault") for e in control("GET", "/journal?limit=10", token=self.token)["entries"]]
        for kind in ("reset", "truncate", "empty_reply"):
            self.assertIn(kind, faults)

    def test_download_resumes_with_range(self):
        _, url = self.completed_asset("image", "imagen-4")
        _, whole = get(url)
        self.rule({"kind": "file_truncate", "after_fraction": 0.25})
        got = b""
        for _ in range(3):
            headers = {"Range": "bytes=%d-" % len(got)} if got else {}
            try:
                _, body = get(url, headers=headers)
                got += body
                break
            except http.client.IncompleteRead as cut:
                got += cut.partial
        self.assertEqual(got, whole, "resumed with Range, the file is whole")
        paths = {f["kind"]: f for f in control("GET", "/coverage", token=self.token)["failure_paths"]}
        self.assertEqual(paths["file_truncate"]["met"], 1)
        self.assertEqual(paths["file_truncate"]["next"].get("resumed_with_range"), 1)

    def test_expired_file_address_is_read_again(self):
        asset_id, _ = self.completed_asset("image", "imagen-4")
        # Addresses handed out from now on live 0 seconds of the server's clock.
        self.rule({"kind": "file_expiry", "ttl_seconds": 0})
        url = request("GET", "%s/assets/%d" % (API, asset_id), key=self.key)[2]["assets"][0]["url"]
        self.assertIn("expires=", url)
        with self.assertRaises(urllib.error.HTTPError) as expired:
            get(url)
        self.assertEqual(expired.exception.code, 403)
        self.assertIn(b"file_url_expired", expired.exception.read())
        control("DELETE", "/faults", token=self.token)
        fresh = request("GET", "%s/assets/%d" % (API, asset_id), key=self.key)[2]["assets"][0]["url"]
        status, _ = get(fresh)
        self.assertEqual(status, 200, "read again, the asset hands out an address that works")


if __name__ == "__main__":
    unittest.main()
