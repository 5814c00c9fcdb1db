// Tests of a client's view of the media generation service, against
// mediamock, with @mediamock/server and Node's own test runner:
//
//   npm install                      # typescript, @types/node, @mediamock/server (with its binary;
//                                    # not published yet: install dist/npm's tarballs of scripts/release)
//   npm test                         # tsc, then node --test: starts a server for the file
//   MEDIAMOCK_URL=http://127.0.0.1:8080 npm test    # or uses a running one
//
// useMediamock gives every test a sandbox of its own (a fresh workspace,
// with its own keys, faults, journal and coverage), made before it and
// deleted after it: the tests never reset the server, so they share it
// with other suites. Requests and answers are typed from openapi.json.
import { after, afterEach, before, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { deflateSync } from "node:zlib";
import { useMediamock, type ApiSchemas } from "@mediamock/server";

const mm = useMediamock({ hooks: { before, after, beforeEach, afterEach } });

/** A valid PNG made by hand. */
function tinyPNG(width = 2, height = 2): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (kind: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(kind), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array(width).fill([0, 0, 255]).flat())]);
  const raw = Buffer.concat(Array(height).fill(row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

test("a generation completes and serves its file", async () => {
  const api = mm.sandbox.api();
  const request: ApiSchemas["GenerationRequest"] = {
    modality: "image", model_id: "flux-2-pro", prompt: "a red fox in the snow", wait_seconds: 30,
  };
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
  const bytes = new Uint8Array(await file.arrayBuffer());
  assert.ok(bytes[0] === 0x89 || bytes[0] === 0xff, "a PNG or a JPEG");
});

test("an image uploads as JSON and as multipart", async () => {
  const api = mm.sandbox.api();
  const uri = `data:image/png;base64,${tinyPNG().toString("base64")}`;
  const json = await api.post("/uploads", { body: { image_url: uri, title: "from json" } });
  assert.ok(json.ok, JSON.stringify(json.error));
  assert.deepEqual([json.data.kind, json.data.status, json.data.credits, json.data.title], ["image", "completed", 0, "from json"]);

  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(tinyPNG())], { type: "image/png" }), "dot.png");
  const multipart = await api.post("/uploads", { form });
  assert.ok(multipart.ok, JSON.stringify(multipart.error));
  assert.equal(multipart.data.title, "dot.png");
});

test("a 429 carries Retry-After, and the sandbox's reset gives a fresh window", async () => {
  // A sandbox of its own on the free plan, 3 requests a minute.
  const small = await mm.server.sandbox({ name: "rate limit", from: "Pixel Garage", rate_limit_per_minute: 3 });
  try {
    let res = await small.api().get("/account");
    for (let i = 0; i < 3 && res.ok; i++) res = await small.api().get("/account");
    assert.equal(res.status, 429);
    assert.equal(res.error?.error?.code, "rate_limited");
    assert.equal(res.headers.get("x-ratelimit-remaining"), "0");
    assert.ok(Number(res.headers.get("retry-after")) > 0);
    // The clock is shared: instead of moving it (or sleeping), reset the sandbox.
    await small.control.resetSandbox(small.id);
    assert.equal((await small.api().get("/account")).status, 200);
    assert.equal((await mm.sandbox.api().get("/account")).status, 200, "the other sandbox never noticed");
  } finally {
    await small.delete();
  }
});

test("an injected failure is refunded", async () => {
  const { api, control, run } = mm.sandbox;
  await control.failNext({ count: 1 }); // with the sandbox's control token: this sandbox alone
  const created = await api().post("/generations", {
    body: { modality: "image", model_id: "imagen-4", prompt: "a lighthouse" },
  });
  assert.ok(created.ok, JSON.stringify(created.error));
  await run("1h"); // finish this sandbox's jobs now, without moving the shared clock
  const generation = await api().get("/generations/{id}", { params: { id: created.data.assets[0]!.id } });
  assert.equal(generation.data?.status, "failed");
  const account = await api().get("/account");
  assert.equal(account.data?.credits_balance, created.data.credits_balance + created.data.credits_charged, "refunded");
});

test("a test waits for the request its client sends in the background, without sleeping", async () => {
  const { api, control } = mm.sandbox;
  const seq = await control.journalSeq();
  // The client under test polls in the background; the test does not know when.
  const polling = (async () => {
    await Promise.resolve();
    return api().get("/account");
  })();
  const entry = await control.awaitRequest({ operation: "getAccount", after: seq, timeout: 10 });
  assert.equal(entry.sandbox_id, mm.sandbox.id);
  assert.equal(entry.status, 200);
  assert.ok(entry.seq > seq);
  assert.equal((await polling).status, 200);
});

test("the client report grades polling", async () => {
  const { api, control } = mm.sandbox;
  // A good client long-polls with wait_seconds: nothing to report.
  const created = await api().post("/generations", {
    body: { modality: "image", model_id: "imagen-4", prompt: "a kite", wait_seconds: 55 },
  });
  assert.ok(created.ok, JSON.stringify(created.error));
  await control.assertGoodClient();
  // Reads of an id that does not exist are a finding, with its fix.
  for (let i = 0; i < 2; i++) {
    assert.equal((await api().get("/generations/{id}", { params: { id: 999999 } })).status, 404);
  }
  const report = await control.report({ fail_on: "poll-unknown-id" });
  assert.ok(report.failed);
  assert.deepEqual(report.findings.map((f) => f.id), ["poll-unknown-id"]);
  await assert.rejects(control.assertGoodClient(), (err: Error) => err.message.includes("poll-unknown-id") && err.message.includes("Fix:"));
  // The sandbox's journal as HAR 1.2, for DevTools, Postman or k6: the
  // report's findings annotate the requests they cite.
  const har = await control.har();
  assert.equal(har.log.version, "1.2");
  const cited = har.log.entries.filter((e) => ((e as { _findings?: string[] })._findings ?? []).includes("poll-unknown-id"));
  assert.equal(cited.length, 2);
});
