"""Tests of a client's view of the media generation service, against mediamock.

Standard library only. Run against a running server:

    MEDIAMOCK_URL=http://127.0.0.1:8080 python3 -m unittest -v test_mediamock.py

Every test works in a sandbox of its own (a fresh workspace, with its own
keys, faults, journal and coverage), made in setUp and deleted in
tearDown: the tests never reset the server, so they can share it with
other suites running at the same time.
"""
import struct
import unittest
import uuid
import zlib

from mediamock_client import API, control, new_sandbox, request


def tiny_png(width=2, height=2):
    """A valid PNG made by hand."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class MediamockTest(unittest.TestCase):
    def setUp(self):
        self.sandbox = new_sandbox(name=self.id())
        self.key = self.sandbox["api_key"]
        self.addCleanup(control, "DELETE", "/sandboxes/" + self.sandbox["id"], token=self.sandbox["control_token"])

    def call(self, method, path, body=None, **kw):
        """Calls the service's API with the sandbox's key."""
        return request(method, API + path, body, key=kw.pop("key", self.key), **kw)

    def test_generation_completes_and_serves_its_file(self):
        status, _, created = self.call("POST", "/generations", {
            "modality": "image", "model_id": "flux-2-pro", "prompt": "a red fox in the snow", "wait_seconds": 30})
        self.assertEqual(status, 201, created)
        self.assertIn("credits_balance", created)
        asset = created["assets"][0]
        generation = created
        for _ in range(10):  # long polls until the job ends, whatever the clock does
            if generation["status"] in ("completed", "failed"):
                break
            status, _, generation = self.call("GET", "/generations/%d?wait_seconds=30" % asset["id"])
            self.assertEqual(status, 200, generation)
        self.assertEqual(generation["status"], "completed")
        asset = generation["assets"][0]
        status, headers, data = request("GET", asset["url"])
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], asset["mime_type"])
        self.assertTrue(data.startswith(b"\x89PNG") or data.startswith(b"\xff\xd8"), data[:8])

    def test_upload_as_json_and_as_multipart(self):
        import base64
        uri = "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
        status, _, asset = self.call("POST", "/uploads", {"image_url": uri, "title": "from json"})
        self.assertEqual(status, 201, asset)
        self.assertEqual((asset["kind"], asset["status"], asset["credits"], asset["title"]), ("image", "completed", 0, "from json"))

        boundary = uuid.uuid4().hex
        body = (("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"dot.png\"\r\n"
                 "Content-Type: image/png\r\n\r\n" % boundary).encode() + tiny_png() + ("\r\n--%s--\r\n" % boundary).encode())
        status, _, asset = self.call("POST", "/uploads", body, content_type="multipart/form-data; boundary=" + boundary)
        self.assertEqual(status, 201, asset)
        self.assertEqual(asset["title"], "dot.png")

    def test_rate_limit_and_retry_after(self):
        # A sandbox of its own on the free plan, 3 requests a minute: its
        # window is its own, whatever the other suites do.
        small = new_sandbox(name=self.id() + " (free)", **{"from": "Pixel Garage", "rate_limit_per_minute": 3})
        self.addCleanup(control, "DELETE", "/sandboxes/" + small["id"], token=small["control_token"])
        for _ in range(4):
            status, headers, body = self.call("GET", "/account", key=small["api_key"])
            if status == 429:
                break
            self.assertEqual(status, 200, body)
        self.assertEqual(status, 429)
        self.assertEqual(body["error"]["code"], "rate_limited")
        self.assertEqual(headers["X-RateLimit-Remaining"], "0")
        self.assertTrue(headers["X-RateLimit-Limit"] and headers["X-RateLimit-Reset"])
        self.assertGreater(int(headers["Retry-After"]), 0)
        # The clock is shared: instead of moving it (or sleeping), put the
        # sandbox back to its start, with a fresh window.
        control("POST", "/sandboxes/%s/reset" % small["id"], token=small["control_token"])
        status, _, body = self.call("GET", "/account", key=small["api_key"])
        self.assertEqual(status, 200, body)
        # The other sandbox never noticed.
        self.assertEqual(self.call("GET", "/account")[0], 200)

    def test_injected_failure_is_refunded(self):
        # A fault set with the sandbox's control token touches this sandbox alone.
        control("POST", "/faults/fail-next", {"count": 1}, token=self.sandbox["control_token"])
        status, _, created = self.call("POST", "/generations", {
            "modality": "image", "model_id": "imagen-4", "prompt": "a lighthouse"})
        self.assertEqual(status, 201, created)
        charged = created["credits_charged"]
        # Finish this sandbox's jobs now, without moving the shared clock.
        control("POST", "/sandboxes/%s/run" % self.sandbox["id"], {"limit": "1h"}, token=self.sandbox["control_token"])
        _, _, generation = self.call("GET", "/generations/%d" % created["assets"][0]["id"])
        self.assertEqual(generation["status"], "failed")
        _, _, account = self.call("GET", "/account")
        self.assertEqual(account["credits_balance"], created["credits_balance"] + charged, "refunded")
        journal = control("GET", "/journal", token=self.sandbox["control_token"])
        self.assertTrue(all(e["sandbox_id"] == self.sandbox["id"] for e in journal["entries"]))


if __name__ == "__main__":
    unittest.main()
