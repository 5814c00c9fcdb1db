"""Tests of a client's view of the media generation service, against mediamock.

Standard library only. Run against a running server:

    MEDIAMOCK_URL=http://127.0.0.1:8080 python3 -m unittest -v test_mediamock.py
"""
import json
import os
import struct
import unittest
import urllib.error
import urllib.request
import uuid
import zlib

ROOT = os.environ.get("MEDIAMOCK_URL", "http://127.0.0.1:8080").rstrip("/")
API = ROOT + "/api/v1"
KEY = os.environ.get("MEDIAMOCK_API_KEY", "mk_test_all_scopes")
FREE_KEY = "mk_test_free_plan"  # 20 requests a minute


def request(method, url, body=None, key=KEY, content_type="application/json"):
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


def control(method, path, body=None):
    """Calls the mock's control API (JSON on every state change)."""
    status, _, out = request(method, ROOT + "/_mock" + path, body if body is not None else {}, key=None)
    assert status == 200, (path, status, out)
    return out


def tiny_png(width=2, height=2):
    """A valid PNG made by hand."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class MediamockTest(unittest.TestCase):
    def setUp(self):
        control("POST", "/reset")

    def test_generation_completes_and_serves_its_file(self):
        status, _, created = request("POST", API + "/generations", {
            "modality": "image", "model_id": "flux-2-pro", "prompt": "a red fox in the snow", "wait_seconds": 30})
        self.assertEqual(status, 201, created)
        self.assertIn("credits_balance", created)
        asset = created["assets"][0]
        generation = created
        for _ in range(10):  # long polls until the job ends, whatever the clock does
            if generation["status"] in ("completed", "failed"):
                break
            status, _, generation = request("GET", "%s/generations/%d?wait_seconds=30" % (API, asset["id"]))
            self.assertEqual(status, 200, generation)
        self.assertEqual(generation["status"], "completed")
        asset = generation["assets"][0]
        status, headers, data = request("GET", asset["url"], key=None)
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], asset["mime_type"])
        self.assertTrue(data.startswith(b"\x89PNG") or data.startswith(b"\xff\xd8"), data[:8])

    def test_upload_as_json_and_as_multipart(self):
        import base64
        uri = "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
        status, _, asset = request("POST", API + "/uploads", {"image_url": uri, "title": "from json"})
        self.assertEqual(status, 201, asset)
        self.assertEqual((asset["kind"], asset["status"], asset["credits"], asset["title"]), ("image", "completed", 0, "from json"))

        boundary = uuid.uuid4().hex
        body = (("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"dot.png\"\r\n"
                 "Content-Type: image/png\r\n\r\n" % boundary).encode() + tiny_png() + ("\r\n--%s--\r\n" % boundary).encode())
        status, _, asset = request("POST", API + "/uploads", body, content_type="multipart/form-data; boundary=" + boundary)
        self.assertEqual(status, 201, asset)
        self.assertEqual(asset["title"], "dot.png")

    def test_rate_limit_and_retry_after(self):
        for _ in range(25):
            status, headers, body = request("GET", API + "/account", key=FREE_KEY)
            if status == 429:
                break
            self.assertEqual(status, 200, body)
        self.assertEqual(status, 429)
        self.assertEqual(body["error"]["code"], "rate_limited")
        self.assertEqual(headers["X-RateLimit-Remaining"], "0")
        self.assertTrue(headers["X-RateLimit-Limit"] and headers["X-RateLimit-Reset"])
        wait = int(headers["Retry-After"])
        self.assertGreater(wait, 0)
        # Instead of sleeping, move the mock's clock by Retry-After.
        control("POST", "/clock/advance", {"seconds": wait})
        status, _, body = request("GET", API + "/account", key=FREE_KEY)
        self.assertEqual(status, 200, body)


if __name__ == "__main__":
    unittest.main()
