// Tests of a client's view of the media generation service, against
// mediamock, with Node's own test runner and fetch (Node 20, no packages):
//
//   MEDIAMOCK_URL=http://127.0.0.1:8080 node --test
//
// Every test works in a sandbox of its own (a fresh workspace, with its own
// keys, faults, journal and coverage), made before it and deleted after it:
// the tests never reset the server, so they share it with other suites.
import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { deflateSync } from "node:zlib";

import { API, call, control, deleteSandbox, newSandbox } from "./mediamock.mjs";

/** A valid PNG made by hand. */
function tinyPNG(width = 2, height = 2) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (kind, data) => {
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

let sandbox;
beforeEach(async (t) => {
  sandbox = await newSandbox({ name: t.name });
});
afterEach(async () => {
  await deleteSandbox(sandbox);
});

test("a generation completes and serves its file", async () => {
  const created = await call("POST", `${API}/generations`, {
    key: sandbox.api_key,
    body: { modality: "image", model_id: "flux-2-pro", prompt: "a red fox in the snow", wait_seconds: 30 },
  });
  assert.equal(created.status, 201, JSON.stringify(created.data));
  let generation = created.data;
  const id = generation.assets[0].id;
  for (let i = 0; i < 10 && !["completed", "failed"].includes(generation.status); i++) {
    const res = await call("GET", `${API}/generations/${id}?wait_seconds=30`, { key: sandbox.api_key });
    assert.equal(res.status, 200);
    generation = res.data;
  }
  assert.equal(generation.status, "completed");
  const asset = generation.assets[0];
  const file = await call("GET", asset.url);
  assert.equal(file.status, 200);
  assert.equal(file.headers.get("content-type"), asset.mime_type);
  assert.ok(file.data[0] === 0x89 || file.data[0] === 0xff, "a PNG or a JPEG");
});

test("an image uploads as JSON and as multipart", async () => {
  const uri = `data:image/png;base64,${tinyPNG().toString("base64")}`;
  const json = await call("POST", `${API}/uploads`, { key: sandbox.api_key, body: { image_url: uri, title: "from json" } });
  assert.equal(json.status, 201, JSON.stringify(json.data));
  assert.deepEqual([json.data.kind, json.data.status, json.data.credits, json.data.title], ["image", "completed", 0, "from json"]);

  const form = new FormData();
  form.append("file", new Blob([tinyPNG()], { type: "image/png" }), "dot.png");
  const multipart = await call("POST", `${API}/uploads`, { key: sandbox.api_key, form });
  assert.equal(multipart.status, 201, JSON.stringify(multipart.data));
  assert.equal(multipart.data.title, "dot.png");
});

test("a 429 carries Retry-After, and the sandbox's reset gives a fresh window", async () => {
  // A sandbox of its own on the free plan, 3 requests a minute.
  const small = await newSandbox({ name: "rate limit", from: "Pixel Garage", rate_limit_per_minute: 3 });
  try {
    let res;
    for (let i = 0; i < 4; i++) {
      res = await call("GET", `${API}/account`, { key: small.api_key });
      if (res.status === 429) break;
      assert.equal(res.status, 200);
    }
    assert.equal(res.status, 429);
    assert.equal(res.data.error.code, "rate_limited");
    assert.equal(res.headers.get("x-ratelimit-remaining"), "0");
    assert.ok(Number(res.headers.get("retry-after")) > 0);
    // The clock is shared: instead of moving it (or sleeping), reset the sandbox.
    await control("POST", `/sandboxes/${small.id}/reset`, {}, { token: small.control_token });
    assert.equal((await call("GET", `${API}/account`, { key: small.api_key })).status, 200);
    assert.equal((await call("GET", `${API}/account`, { key: sandbox.api_key })).status, 200, "the other sandbox never noticed");
  } finally {
    await deleteSandbox(small);
  }
});

test("an injected failure is refunded", async () => {
  await control("POST", "/faults/fail-next", { count: 1 }, { token: sandbox.control_token });
  const created = await call("POST", `${API}/generations`, {
    key: sandbox.api_key, body: { modality: "image", model_id: "imagen-4", prompt: "a lighthouse" },
  });
  assert.equal(created.status, 201);
  // Finish this sandbox's jobs now, without moving the shared clock.
  await control("POST", `/sandboxes/${sandbox.id}/run`, { limit: "1h" }, { token: sandbox.control_token });
  const generation = await call("GET", `${API}/generations/${created.data.assets[0].id}`, { key: sandbox.api_key });
  assert.equal(generation.data.status, "failed");
  const account = await call("GET", `${API}/account`, { key: sandbox.api_key });
  assert.equal(account.data.credits_balance, created.data.credits_balance + created.data.credits_charged, "refunded");
});
