// A new user's first test: one server for the file, a sandbox per test,
// typed calls of the service's API and of the control API.
import { before, after, beforeEach, afterEach, test } from "node:test";
import assert from "node:assert/strict";
import { useMediamock, type ApiSchemas } from "@mediamock/server";

const mm = useMediamock({ hooks: { before, after, beforeEach, afterEach } });

const request: ApiSchemas["GenerationRequest"] = {
  modality: "image", model_id: "flux-2-pro", prompt: "a red fox in the snow",
};

test("a generation completes and its file downloads", async () => {
  const api = mm.sandbox.api();
  const created = await api.post("/generations", { body: request });
  assert.ok(created.ok, JSON.stringify(created.error));
  let generation: ApiSchemas["Generation"] = created.data;
  const id = generation.assets[0]!.id;
  for (let i = 0; i < 10 && !["completed", "failed"].includes(generation.status); i++) {
    const res = await api.get("/generations/{id}", { params: { id }, query: { wait_seconds: 30 } });
    assert.ok(res.ok, JSON.stringify(res.error));
    generation = res.data;
  }
  assert.equal(generation.status, "completed");
  const asset = generation.assets[0]!;
  const file = await fetch(asset.url!);
  assert.equal(file.status, 200);
  assert.equal(file.headers.get("content-type"), asset.mime_type);
  assert.ok((await file.arrayBuffer()).byteLength > 0);
});

test("a forced failure is refunded", async () => {
  const { api, control, run } = mm.sandbox;
  await control.failNext({ count: 1 });
  const created = await api().post("/generations", { body: { ...request, model_id: "imagen-4" } });
  assert.ok(created.ok, JSON.stringify(created.error));
  const charged = created.data.credits_charged;
  assert.ok(charged > 0, "imagen-4 is not a gift: it costs credits");
  await run("1h"); // the sandbox's jobs end now, without moving the shared clock
  const generation = await api().get("/generations/{id}", { params: { id: created.data.assets[0]!.id } });
  assert.ok(generation.ok);
  assert.equal(generation.data.status, "failed");
  const account = await api().get("/account");
  assert.ok(account.ok);
  assert.equal(account.data.credits_balance, created.data.credits_balance + charged, "refunded");
  const journal = await control.journal();
  assert.ok(journal.entries.every((e) => e.sandbox_id === mm.sandbox.id), "the sandbox's own journal");
});
