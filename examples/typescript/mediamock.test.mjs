// Tests of a client's view of the media generation service, against
// mediamock, with Node's own test runner and fetch (Node 20, no packages):
//
//   MEDIAMOCK_URL=http://127.0.0.1:8080 node --test
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { deflateSync } from "node:zlib";

const ROOT = (process.env.MEDIAMOCK_URL ?? "http://127.0.0.1:8080").replace(/\/$/, "");
const API = `${ROOT}/api/v1`;
const KEY = process.env.MEDIAMOCK_API_KEY ?? "mk_test_all_scopes";
const FREE_KEY = "mk_test_free_plan"; // 20 requests a minute

/** Makes a request; JSON bodies are sent and read as JSON. */
async function call(method, url, { body, key = KEY, form } = {}) {
  const headers = {};
  if (key) headers.Authorization = `Bearer ${key}`;
  let payload = form;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const res = await fetch(url, { method, headers, body: payload });
  const type = res.headers.get("content-type") ?? "";
  const data = type.startsWith("application/json") ? await res.json() : Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, data };
}

/** Calls the mock's control API (JSON on every state change). */
async function control(method, path, body = {}) {
  const res = await call(method, `${ROOT}/_mock${path}`, { body, key: null });
  assert.equal(res.status, 200, JSON.stringify(res.data));
  return res.data;
}

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

beforeEach(async () => {
  await control("POST", "/reset");
});

test("a generation completes and serves its file", async () => {
  const created = await call("POST", `${API}/generations`, {
    body: { modality: "image", model_id: "flux-2-pro", prompt: "a red fox in the snow", wait_seconds: 30 },
  });
  assert.equal(created.status, 201, JSON.stringify(created.data));
  let generation = created.data;
  const id = generation.assets[0].id;
  for (let i = 0; i < 10 && !["completed", "failed"].includes(generation.status); i++) {
    const res = await call("GET", `${API}/generations/${id}?wait_seconds=30`);
    assert.equal(res.status, 200);
    generation = res.data;
  }
  assert.equal(generation.status, "completed");
  const asset = generation.assets[0];
  const file = await call("GET", asset.url, { key: null });
  assert.equal(file.status, 200);
  assert.equal(file.headers.get("content-type"), asset.mime_type);
  assert.ok(file.data[0] === 0x89 || file.data[0] === 0xff, "a PNG or a JPEG");
});

test("an image uploads as JSON and as multipart", async () => {
  const uri = `data:image/png;base64,${tinyPNG().toString("base64")}`;
  const json = await call("POST", `${API}/uploads`, { body: { image_url: uri, title: "from json" } });
  assert.equal(json.status, 201, JSON.stringify(json.data));
  assert.deepEqual([json.data.kind, json.data.status, json.data.credits, json.data.title], ["image", "completed", 0, "from json"]);

  const form = new FormData();
  form.append("file", new Blob([tinyPNG()], { type: "image/png" }), "dot.png");
  const multipart = await call("POST", `${API}/uploads`, { form });
  assert.equal(multipart.status, 201, JSON.stringify(multipart.data));
  assert.equal(multipart.data.title, "dot.png");
});

test("a 429 carries Retry-After, and the request goes through after it", async () => {
  let res;
  for (let i = 0; i < 25; i++) {
    res = await call("GET", `${API}/account`, { key: FREE_KEY });
    if (res.status === 429) break;
    assert.equal(res.status, 200);
  }
  assert.equal(res.status, 429);
  assert.equal(res.data.error.code, "rate_limited");
  assert.equal(res.headers.get("x-ratelimit-remaining"), "0");
  const wait = Number(res.headers.get("retry-after"));
  assert.ok(wait > 0);
  // Instead of sleeping, move the mock's clock by Retry-After.
  await control("POST", "/clock/advance", { seconds: wait });
  assert.equal((await call("GET", `${API}/account`, { key: FREE_KEY })).status, 200);
});
