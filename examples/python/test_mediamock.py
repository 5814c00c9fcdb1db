"""Tests of a client's view of the media generation service, against mediamock,
with the ``mediamock`` package's pytest plugin:

    pip install mediamock pytest      # once published; today the wheel of scripts/release
    pytest -v test_mediamock.py       # starts a server for the session
    MEDIAMOCK_URL=http://127.0.0.1:8080 pytest -v test_mediamock.py   # or uses a running one

Every test gets a sandbox of its own from the ``mediamock`` fixture (a fresh
workspace, with its own keys, faults, journal and coverage), deleted after
it: the tests never reset the server, so they can share it with other
suites running at the same time.
"""
import base64
import struct
import threading
import zlib

from mediamock import MediamockError, MediamockSandbox
from mediamock.control import request


def tiny_png(width=2, height=2):
    """A valid PNG made by hand."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_generation_completes_and_serves_its_file(mediamock: MediamockSandbox):
    api = mediamock.api()
    created = api.post("/generations", {
        "modality": "image", "model_id": "flux-2-pro", "prompt": "a red fox in the snow", "wait_seconds": 30})
    assert created.status == 201, created.body
    assert "credits_balance" in created.body
    generation = created.body
    asset_id = generation["assets"][0]["id"]
    for _ in range(10):  # long polls until the job ends, whatever the clock does
        if generation["status"] in ("completed", "failed"):
            break
        res = api.get("/generations/%d" % asset_id, wait_seconds=30)
        assert res.status == 200, res.body
        generation = res.body
    assert generation["status"] == "completed"
    asset = generation["assets"][0]
    file = request("GET", asset["url"])
    assert file.status == 200
    assert file.headers["Content-Type"] == asset["mime_type"]
    assert file.body.startswith(b"\x89PNG") or file.body.startswith(b"\xff\xd8"), file.body[:8]


def test_upload_as_json_and_as_multipart(mediamock: MediamockSandbox):
    uri = "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
    res = mediamock.api().post("/uploads", {"image_url": uri, "title": "from json"})
    assert res.status == 201, res.body
    asset = res.body
    assert (asset["kind"], asset["status"], asset["credits"], asset["title"]) == ("image", "completed", 0, "from json")

    res = mediamock.api().upload(tiny_png(), "dot.png")
    assert res.status == 201, res.body
    assert res.body["title"] == "dot.png"


def test_rate_limit_and_retry_after(mediamock_server, mediamock: MediamockSandbox):
    # A sandbox of its own on the free plan, 3 requests a minute: its window
    # is its own, whatever the other suites do.
    with mediamock_server.sandbox({"from": "Pixel Garage", "rate_limit_per_minute": 3}, name="free plan") as small:
        for _ in range(4):
            res = small.api().get("/account")
            if res.status == 429:
                break
            assert res.status == 200, res.body
        assert res.status == 429
        assert res.error_code == "rate_limited"
        assert res.headers["X-RateLimit-Remaining"] == "0"
        assert res.headers["X-RateLimit-Limit"] and res.headers["X-RateLimit-Reset"]
        assert int(res.headers["Retry-After"]) > 0
        # The clock is shared: instead of moving it (or sleeping), put the
        # sandbox back to its start, with a fresh window.
        small.reset()
        assert small.api().get("/account").status == 200
    # The other sandbox never noticed.
    assert mediamock.api().get("/account").status == 200


def test_injected_failure_is_refunded(mediamock: MediamockSandbox):
    # A fault set with the sandbox's control token touches this sandbox alone.
    mediamock.control.fail_next(count=1)
    created = mediamock.api().post("/generations", {"modality": "image", "model_id": "imagen-4", "prompt": "a lighthouse"})
    assert created.status == 201, created.body
    charged = created.body["credits_charged"]
    # Finish this sandbox's jobs now, without moving the shared clock.
    mediamock.run("1h")
    generation = mediamock.api().get("/generations/%d" % created.body["assets"][0]["id"]).body
    assert generation["status"] == "failed"
    account = mediamock.api().get("/account").body
    assert account["credits_balance"] == created.body["credits_balance"] + charged, "refunded"
    journal = mediamock.control.journal()
    assert all(e["sandbox_id"] == mediamock.id for e in journal["entries"])


def test_wait_for_the_request_a_client_sends_in_the_background(mediamock: MediamockSandbox):
    # The client under test polls from a thread; the test waits for its
    # request instead of sleeping.
    seq = mediamock.control.journal_seq()
    worker = threading.Thread(target=lambda: mediamock.api().get("/account"))
    worker.start()
    entry = mediamock.control.await_request(operation="getAccount", after=seq, timeout=10)
    worker.join()
    assert entry["sandbox_id"] == mediamock.id
    assert entry["status"] == 200 and entry["seq"] > seq
    try:
        mediamock.control.await_request(operation="deleteAsset", after=entry["seq"], timeout=0)
        raise AssertionError("a request no one sent was seen")
    except MediamockError as err:
        assert "request_not_seen" in str(err)


def test_the_client_report_grades_polling(mediamock: MediamockSandbox):
    # A good client long-polls with wait_seconds: nothing to report.
    api = mediamock.api()
    created = api.post("/generations", {"modality": "image", "model_id": "imagen-4", "prompt": "a kite", "wait_seconds": 55})
    assert created.status == 201, created.body
    mediamock.control.assert_good_client()
    # Reads of an id that does not exist are a finding, with its fix.
    for _ in range(2):
        assert api.get("/generations/999999").status == 404
    report = mediamock.control.report(fail_on=["poll-unknown-id"])
    assert report["failed"] and [f["id"] for f in report["findings"]] == ["poll-unknown-id"]
    try:
        mediamock.control.assert_good_client()
        raise AssertionError("the report found nothing")
    except AssertionError as err:
        assert "poll-unknown-id" in str(err) and "Fix:" in str(err), err
    # The sandbox's journal as HAR 1.2, for DevTools, Postman or k6: the
    # report's findings annotate the requests they cite.
    har = mediamock.control.har()
    assert har["log"]["version"] == "1.2"
    assert sum("poll-unknown-id" in e.get("_findings", []) for e in har["log"]["entries"]) == 2
