// Eight test suites at once against one mediamock server, none stepping on
// another. Each runs in a sandbox of its own and breaks it in its own way:
// one fails every generation, one adds latency, one forces 429s, one fails
// at a rate of 1, one forces 503s, three break nothing. Every suite must
// see its own faults and nobody else's.
//
//   npm test      # or MEDIAMOCK_URL=http://127.0.0.1:8080 npm test
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { useMediamock, type ControlClient } from "@mediamock/server";

// No sandbox per test here: each suite below makes its own.
const mm = useMediamock({ hooks: { before, after }, sandbox: false });

interface Worker {
  name: string;
  faults: (c: ControlClient) => Promise<unknown>;
  generations: "completed" | "failed";
  accounts: number;
  latency?: boolean;
}

const workers: Worker[] = [
  { name: "fails every generation", faults: (c) => c.failNext({ count: 1000 }), generations: "failed", accounts: 200 },
  { name: "adds latency", faults: (c) => c.setLatency("*", 2), generations: "completed", accounts: 200, latency: true },
  { name: "forces 429s", faults: (c) => c.forceResponses({ operation: "getAccount", status: 429, count: 1000 }), generations: "completed", accounts: 429 },
  { name: "fails at a rate of 1", faults: (c) => c.setFailureRate(1), generations: "failed", accounts: 200 },
  { name: "forces 503s", faults: (c) => c.forceResponses({ operation: "getAccount", status: 503, count: 1000 }), generations: "completed", accounts: 503 },
  { name: "plain 1", faults: async () => {}, generations: "completed", accounts: 200 },
  { name: "plain 2", faults: async () => {}, generations: "completed", accounts: 200 },
  { name: "plain 3", faults: async () => {}, generations: "completed", accounts: 200 },
];

test("eight suites at once, each in its own sandbox", { concurrency: workers.length }, async (t) => {
  await Promise.all(workers.map((w) =>
    t.test(w.name, async () => {
      const sb = await mm.server.sandbox({ name: w.name });
      try {
        await w.faults(sb.control);
        const ids: number[] = [];
        for (let i = 0; i < 3; i++) {
          const created = await sb.api().post("/generations", {
            body: { modality: "image", model_id: "imagen-4", prompt: `${w.name}, image ${i}` },
          });
          assert.ok(created.ok, JSON.stringify(created.error));
          ids.push(created.data.assets[0]!.id);
          assert.equal((await sb.api().get("/account")).status, w.accounts);
        }
        await sb.run("1h");
        for (const id of ids) {
          const g = await sb.api().get("/generations/{id}", { params: { id } });
          assert.equal(g.data?.status, w.generations);
        }
        const { entries } = await sb.control.journal({ limit: 100 });
        assert.ok(entries.length > 0);
        for (const e of entries) {
          assert.equal(e.sandbox_id, sb.id, "only its own requests");
          assert.equal((e.injected_latency_ms ?? 0) > 0, Boolean(w.latency), "latency only where it was set");
        }
      } finally {
        await sb.delete();
      }
    })));
});
