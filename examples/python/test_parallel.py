"""Eight test suites at once against one mediamock server, none stepping on another.

Each worker process makes a sandbox of its own and breaks it in its own
way: one fails every generation, one adds latency, one forces 429s, one
fails at a rate of 1, one forces 503s, three break nothing. Every worker
must see its own faults and nobody else's. With the ``mediamock`` package:

    pytest -v test_parallel.py        # or MEDIAMOCK_URL=... pytest -v test_parallel.py
"""
import multiprocessing

import pytest

from mediamock import ControlClient

WORKERS = [
    # name, control calls on the sandbox, what its generations end as, what its account reads answer
    ("fails every generation", [("POST", "/faults/fail-next", {"count": 1000})], "failed", 200),
    ("adds latency", [("PUT", "/faults/latency/*", {"ms": 2})], "completed", 200),
    ("forces 429s", [("POST", "/faults/responses", {"operation": "getAccount", "status": 429, "count": 1000})], "completed", 429),
    ("fails at a rate of 1", [("PUT", "/faults/failure-rate", {"rate": 1})], "failed", 200),
    ("forces 503s", [("POST", "/faults/responses", {"operation": "getAccount", "status": 503, "count": 1000})], "completed", 503),
    ("plain 1", [], "completed", 200),
    ("plain 2", [], "completed", 200),
    ("plain 3", [], "completed", 200),
]


def run_worker(args):
    """One suite, in a process of its own: returns what it saw, for the parent to judge."""
    (name, faults, _, _), control_url = args
    from mediamock import ApiClient
    server = ControlClient(control_url)
    sandbox = server.create_sandbox(name=name)
    control = server.for_sandbox(sandbox)
    api = ApiClient(sandbox["base_url"], sandbox["api_key"])
    try:
        for method, path, body in faults:
            control.call(method, path, body)
        ids, accounts = [], []
        for i in range(3):
            created = api.post("/generations", {"modality": "image", "model_id": "imagen-4", "prompt": "%s, image %d" % (name, i)})
            assert created.status == 201, created.body
            ids.append(created.body["assets"][0]["id"])
            accounts.append(api.get("/account").status)
        control.run_sandbox(sandbox["id"], "1h")
        statuses = [api.get("/generations/%d" % i).body["status"] for i in ids]
        journal = control.journal(limit=100)["entries"]
        return {
            "statuses": statuses,
            "accounts": accounts,
            "own_entries_only": all(e["sandbox_id"] == sandbox["id"] for e in journal),
            "latency": [e.get("injected_latency_ms", 0) > 0 for e in journal],
        }
    finally:
        control.delete_sandbox(sandbox["id"])


def test_eight_workers_each_in_its_sandbox(mediamock_server):
    with multiprocessing.Pool(len(WORKERS)) as pool:
        results = pool.map(run_worker, [(w, mediamock_server.control_url) for w in WORKERS])
    for (name, _, generations, accounts), seen in zip(WORKERS, results):
        assert seen["statuses"] == [generations] * 3, name
        assert seen["accounts"] == [accounts] * 3, name
        assert seen["own_entries_only"], name
        assert seen["latency"], name
        assert set(seen["latency"]) == {name == "adds latency"}, name


if __name__ == "__main__":
    raise SystemExit(pytest.main(["-v", __file__]))
