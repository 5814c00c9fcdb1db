// Eight test suites at once against one mediamock server, none stepping on
// another. Each runs in a sandbox of its own and breaks it in its own way:
// one fails every generation, one adds latency, one forces 429s, one fails
// at a rate of 1, one forces 503s, three break nothing. Every suite must
// see its own faults and nobody else's.
//
//   MEDIAMOCK_URL=http://127.0.0.1:8080 node --test --test-concurrency=8
import { test } from "node:test";
import assert from "node:assert/strict";
import { API, call, control, deleteSandbox, newSandbox } from "./mediamock.mjs";

const workers = [
  { name: "fails every generation", faults: [["POST", "/faults/fail-next", { count: 1000 }]], generations: "failed", accounts: 200 },
  { name: "adds latency", faults: [["PUT", "/faults/latency/*", { ms: 2 }]], generations: "completed", accounts: 200, latency: true },
  { name: "forces 429s", faults: [["POST", "/faults/responses", { operation: "getAccount", status: 429, count: 1000 }]], generations: "completed", accounts: 429 },
  { name: "fails at a rate of 1", faults: [["PUT", "/faults/failure-rate", { rate: 1 }]], generations: "failed", accounts: 200 },
  { name: "forces 503s", faults: [["POST", "/faults/responses", { operation: "getAccount", status: 503, count: 1000 }]], generations: "completed", accounts: 503 },
  { name: "plain 1", faults: [], generations: "completed", accounts: 200 },
  { name: "plain 2", faults: [], generations: "completed", accounts: 200 },
  { name: "plain 3", faults: [], generations: "completed", accounts: 200 },
];

test("eight suites at once, each in its own sandbox", { concurrency: workers.length }, async (t) => {
  await Promise.all(workers.map((w) =>
    t.test(w.name, async () => {
      const sb = await newSandbox({ name: w.name });
      const token = { token: sb.control_token };
      try {
        for (const [method, path, body] of w.faults) await control(method, path, body, token);
        const ids = [];
        for (let i = 0; i < 3; i++) {
          const created = await call("POST", `${API}/generations`, {
            key: sb.api_key, body: { modality: "image", model_id: "imagen-4", prompt: `${w.name}, image ${i}` },
          });
          assert.equal(created.status, 201, JSON.stringify(created.data));
          ids.push(created.data.assets[0].id);
          assert.equal((await call("GET", `${API}/account`, { key: sb.api_key })).status, w.accounts);
        }
        await control("POST", `/sandboxes/${sb.id}/run`, { limit: "1h" }, token);
        for (const id of ids) {
          const g = await call("GET", `${API}/generations/${id}`, { key: sb.api_key });
          assert.equal(g.data.status, w.generations);
        }
        const { entries } = await control("GET", "/journal?limit=100", {}, token);
        assert.ok(entries.length > 0);
        for (const e of entries) {
          assert.equal(e.sandbox_id, sb.id, "only its own requests");
          assert.equal((e.injected_latency_ms ?? 0) > 0, Boolean(w.latency), "latency only where it was set");
        }
      } finally {
        await deleteSandbox(sb);
      }
    })));
});
