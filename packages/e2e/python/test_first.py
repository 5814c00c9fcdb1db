"""A new user's first tests: the session's server, a sandbox per test."""
from mediamock import MediamockSandbox

REQUEST = {"modality": "image", "model_id": "flux-2-pro", "prompt": "a red fox in the snow"}


def test_generation_completes_and_its_file_downloads(mediamock: MediamockSandbox):
    api = mediamock.api()
    created = api.post("/generations", REQUEST)
    assert created.status == 201, created.body
    generation = created.body
    asset_id = generation["assets"][0]["id"]
    for _ in range(10):
        if generation["status"] in ("completed", "failed"):
            break
        res = api.get("/generations/%d" % asset_id, wait_seconds=30)
        assert res.ok, res.body
        generation = res.body
    assert generation["status"] == "completed"
    asset = generation["assets"][0]
    from mediamock.control import request
    file = request("GET", asset["url"])
    assert file.status == 200
    assert file.headers["Content-Type"] == asset["mime_type"]
    assert len(file.body) > 0


def test_forced_failure_is_refunded(mediamock: MediamockSandbox):
    mediamock.control.fail_next(count=1)
    created = mediamock.api().post("/generations", dict(REQUEST, model_id="imagen-4"))
    assert created.status == 201, created.body
    charged = created.body["credits_charged"]
    assert charged > 0
    mediamock.run("1h")  # the sandbox's jobs end now, without moving the shared clock
    generation = mediamock.api().get("/generations/%d" % created.body["assets"][0]["id"]).body
    assert generation["status"] == "failed"
    account = mediamock.api().get("/account").body
    assert account["credits_balance"] == created.body["credits_balance"] + charged, "refunded"
    entries = mediamock.control.journal()["entries"]
    assert entries and all(e["sandbox_id"] == mediamock.id for e in entries)
