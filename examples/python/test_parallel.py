"""Eight test suites at once against one mediamock server, none stepping on another.

Each worker process makes a sandbox of its own and breaks it in its own
way: one fails every generation, one adds latency, one forces 429s, one
fails at a rate of 1, one forces 503s, three break nothing. Every worker
must see its own faults and nobody else's. Standard library only:

    MEDIAMOCK_URL=http://127.0.0.1:8080 python3 -m unittest -v test_parallel.py
"""
import multiprocessing
import unittest

from mediamock_client import API, control, new_sandbox, request

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


def run_worker(spec):
    """One suite: returns what it saw, for the parent to judge."""
    name, faults, _, _ = spec
    sandbox = new_sandbox(name=name)
    token, key = sandbox["control_token"], sandbox["api_key"]
    try:
        for method, path, body in faults:
            control(method, path, body, token=token)
        ids, accounts = [], []
        for i in range(3):
            status, _, created = request("POST", API + "/generations", {
                "modality": "image", "model_id": "imagen-4", "prompt": "%s, image %d" % (name, i)}, key=key)
            assert status == 201, created
            ids.append(created["assets"][0]["id"])
            accounts.append(request("GET", API + "/account", key=key)[0])
        control("POST", "/sandboxes/%s/run" % sandbox["id"], {"limit": "1h"}, token=token)
        statuses = [request("GET", "%s/generations/%d" % (API, i), key=key)[2]["status"] for i in ids]
        journal = control("GET", "/journal?limit=100", token=token)["entries"]
        return {
            "statuses": statuses,
            "accounts": accounts,
            "own_entries_only": all(e["sandbox_id"] == sandbox["id"] for e in journal),
            "latency": [e.get("injected_latency_ms", 0) > 0 for e in journal],
        }
    finally:
        control("DELETE", "/sandboxes/" + sandbox["id"], token=token)


class ParallelSuitesTest(unittest.TestCase):
    def test_eight_workers_each_in_its_sandbox(self):
        with multiprocessing.Pool(len(WORKERS)) as pool:
            results = pool.map(run_worker, WORKERS)
        for (name, _, generations, accounts), seen in zip(WORKERS, results):
            with self.subTest(worker=name):
                self.assertEqual(seen["statuses"], [generations] * 3)
                self.assertEqual(seen["accounts"], [accounts] * 3)
                self.assertTrue(seen["own_entries_only"])
                self.assertTrue(seen["latency"])
                self.assertEqual(set(seen["latency"]), {name == "adds latency"})


if __name__ == "__main__":
    unittest.main()
