"""What media-API clients meet in production, rehearsed against the binary: moderation at
creation and while processing, a generation that loses some outputs, a social account to
reconnect. Each by a fault rule and by a magic marker, with exact credits and the ledger."""
import pytest

from mediamock import MediamockSandbox

PER_OUTPUT = 6  # imagen-4's credits_per_output in the embedded fixtures
START = 1000


@pytest.fixture
def mediamock_sandbox_spec():
    """Acme Studio's copy with round credits, no monthly gifts."""
    return {"credits": START, "monthly_gifts": []}


def generate(sb, prompt, count):
    return sb.api().post("/generations", {"modality": "image", "model_id": "imagen-4", "prompt": prompt, "count": count})


def finished(sb, created):
    sb.run("1h")  # the sandbox's jobs end now, without moving the shared clock
    res = sb.api().get("/generations/%d" % created["assets"][0]["id"])
    assert res.status == 200, res.body
    return res.body


def balanced(sb, balance, entries):
    """The balance is `balance`, and the ledger's `entries` explain it."""
    assert sb.api().get("/account").body["credits_balance"] == balance
    ledger = sb.control.ledger(sb.workspace_id)
    assert ledger["credits_balance"] == balance
    assert len(ledger["entries"]) == entries, ledger["entries"]
    running = 0
    for e in ledger["entries"]:
        running += e["amount"] if e["type"] in ("grant", "refund") else -e["amount"] if e["type"] == "charge" else 0
        assert e["balance_after"] == running, e
    assert running == balance
    return ledger["entries"]


@pytest.mark.parametrize("by", ["rule", "marker"])
def test_moderation_refuses_at_creation_and_charges_nothing(mediamock: MediamockSandbox, by):
    prompt = "a fox"
    if by == "rule":
        mediamock.control.add_fault("moderation", first=1)
    else:
        prompt += " [mock:moderation]"
    res = generate(mediamock, prompt, 2)
    assert res.status == 422, res.body
    assert res.error_code == "content_moderated"
    balanced(mediamock, START, 1)  # the grant alone
    assets = mediamock.api().get("/assets", limit=50).body["data"]
    assert not [a for a in assets if a.get("prompt", "").startswith("a fox")], "nothing created"


@pytest.mark.parametrize("by", ["rule", "marker"])
def test_moderation_fails_the_job_and_refunds_it(mediamock: MediamockSandbox, by):
    prompt = "a fox"
    if by == "rule":
        mediamock.control.add_fault("moderation", at="processing", modality="image", first=1)
    else:
        prompt += " [mock:moderation=processing]"
    res = generate(mediamock, prompt, 2)
    assert res.status == 201, res.body
    assert res.body["credits_charged"] == 2 * PER_OUTPUT
    assert res.body["credits_balance"] == START - 2 * PER_OUTPUT
    generation = finished(mediamock, res.body)
    assert generation["status"] == "failed"
    for a in generation["assets"]:
        assert (a["status"], a["error"]["code"], a["credits"]) == ("failed", "content_moderated", 0)
    entries = balanced(mediamock, START, 3)
    assert (entries[2]["type"], entries[2]["amount"]) == ("refund", 2 * PER_OUTPUT)


@pytest.mark.parametrize("by", ["rule", "marker"])
def test_some_outputs_fail_and_each_is_refunded(mediamock: MediamockSandbox, by):
    prompt = "four foxes"
    if by == "rule":
        mediamock.control.add_fault("output_failure", outputs=3, model="imagen-4")
    else:
        prompt += " [mock:fail-outputs=3]"
    res = generate(mediamock, prompt, 4)
    assert res.status == 201, res.body
    assert res.body["credits_charged"] == 4 * PER_OUTPUT
    generation = finished(mediamock, res.body)
    assert generation["status"] == "completed", "at least one output completed"
    failed = [a for a in generation["assets"] if a["status"] == "failed"]
    done = [a for a in generation["assets"] if a["status"] == "completed"]
    assert (len(failed), len(done)) == (3, 1)
    assert all(a["error"]["code"] == "output_failed" and a["credits"] == 0 and "url" not in a for a in failed)
    assert done[0]["credits"] == PER_OUTPUT and done[0]["url"]
    entries = balanced(mediamock, START - PER_OUTPUT, 3)
    assert (entries[2]["type"], entries[2]["amount"]) == ("refund", 3 * PER_OUTPUT)
    assert sorted(entries[2]["asset_ids"]) == sorted(a["id"] for a in failed)


@pytest.mark.parametrize("by", ["rule", "marker"])
def test_a_disconnected_account_while_the_others_publish(mediamock: MediamockSandbox, by):
    api = mediamock.api()
    ids = {a["platform"]: a["id"] for a in api.get("/social/accounts").body["data"]}
    created = generate(mediamock, "a latte", 1)
    assert created.status == 201, created.body
    asset = finished(mediamock, created.body)["assets"][0]["id"]
    caption = "New menu"
    if by == "rule":
        mediamock.control.add_fault("account_disconnected", social_account_id=ids["instagram"])
    else:
        caption += " [mock:disconnected=%d]" % ids["instagram"]
    res = api.post("/social/publications", {"asset_ids": [asset], "caption": caption,
                                            "social_account_ids": [ids["instagram"], ids["linkedin"]]})
    assert res.status == 201, res.body
    mediamock.run("1h")
    pub = api.get("/social/publications/%d" % res.body["id"]).body
    assert pub["status"] == "partially_published"
    deliveries = {d["platform"]: d for d in pub["deliveries"]}
    assert deliveries["instagram"]["status"] == "failed"
    assert deliveries["instagram"]["error"]["code"] == "account_disconnected"
    assert deliveries["linkedin"]["status"] == "published" and deliveries["linkedin"]["post_url"]
    accounts = {a["platform"]: a for a in api.get("/social/accounts").body["data"]}
    assert accounts["instagram"]["publishable"] is False, "reconnect it in the app"
    again = api.post("/social/publications", {"asset_ids": [asset], "caption": "again", "social_account_ids": [ids["instagram"]]})
    assert again.status == 400, again.body
    balanced(mediamock, START - PER_OUTPUT, 2)  # publishing is free
