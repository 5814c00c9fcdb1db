// node --test, against MEDIAMOCK_IMAGE (an image built from the repository's Dockerfile).
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { API_KEY, MediamockContainer } from "../index.js";

const image = process.env.MEDIAMOCK_IMAGE;
const skip = image ? false : "MEDIAMOCK_IMAGE is not set (an image built from the repository's Dockerfile)";

async function req(method, url, token, body) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const resp = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await resp.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: resp.status, json };
}

describe("MediamockContainer", { skip }, () => {
  let ctr;
  before(async () => {
    ctr = await new MediamockContainer(image).withClock("manual").withSeed(7).start();
  });
  after(async () => {
    await ctr?.stop();
  });

  test("health", async () => {
    assert.match(ctr.getUrl(), /^http:\/\/[^/]+:\d+$/);
    assert.equal(ctr.getBaseUrl(), `${ctr.getUrl()}/api/v1`);
    const { status, json } = await req("GET", `${ctr.getUrl()}/_mock/health`);
    assert.equal(status, 200);
    assert.equal(json.status, "ok");
  });

  test("a generation with the default key", async () => {
    assert.equal(ctr.keys.all_scopes, API_KEY);
    const gen = await req("POST", `${ctr.getBaseUrl()}/generations`, API_KEY,
      { modality: "image", model_id: "imagen-4", prompt: "a lighthouse" });
    assert.equal(gen.status, 201, JSON.stringify(gen.json));
    const id = gen.json.assets[0].id;
    const got = await req("GET", `${ctr.getBaseUrl()}/generations/${id}`, API_KEY);
    assert.equal(got.status, 200);
    assert.equal(got.json.status, "queued"); // the manual clock: nothing moves by itself
    assert.equal((await req("GET", `${ctr.getBaseUrl()}/account`, "mk_not_a_key")).status, 401);
  });

  test("a sandbox", async () => {
    const sb = await ctr.createSandbox({ name: "testcontainers" });
    assert.match(sb.controlToken, /^sbc_/);
    assert.ok(sb.keys.all_scopes);
    assert.equal(sb.baseUrl, ctr.getBaseUrl());
    assert.equal((await req("GET", `${sb.baseUrl}/account`, sb.apiKey)).status, 200);
    // A fault in the sandbox strikes its requests alone.
    const fault = await req("POST", `${ctr.getControlUrl()}/faults/responses`, sb.controlToken,
      { operation: "getAccount", status: 503, count: 1 });
    assert.ok(fault.status < 300, JSON.stringify(fault.json));
    assert.equal((await req("GET", `${ctr.getBaseUrl()}/account`, API_KEY)).status, 200);
    assert.equal((await req("GET", `${sb.baseUrl}/account`, sb.apiKey)).status, 503);
    await sb.delete();
    assert.equal((await req("GET", `${sb.baseUrl}/account`, sb.apiKey)).status, 401);
  });

  test("options: fixtures and a control token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mediamock-tc-"));
    try {
      const src = readFileSync(new URL("../../../../fixtures/default.json", import.meta.url), "utf8");
      assert.ok(src.includes('"mk_test_all_scopes"'));
      const fixtures = join(dir, "fixtures.json");
      writeFileSync(fixtures, src.replaceAll('"mk_test_all_scopes"', '"mk_test_from_my_fixtures"'));
      const other = await new MediamockContainer(image).withFixtures(fixtures).withControlToken("ctl-secret-for-tests").start();
      try {
        assert.equal(other.controlToken, "ctl-secret-for-tests");
        assert.equal((await req("GET", `${other.getBaseUrl()}/account`, "mk_test_from_my_fixtures")).status, 200);
        assert.equal((await req("GET", `${other.getBaseUrl()}/account`, API_KEY)).status, 401);
        assert.equal((await req("GET", `${other.getControlUrl()}/faults`)).status, 401);
        const sb = await other.createSandbox({ from: "Acme Studio" });
        assert.equal((await req("GET", `${sb.baseUrl}/account`, sb.apiKey)).status, 200);
        await sb.delete();
      } finally {
        await other.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("termination", async () => {
    const url = ctr.getUrl();
    await ctr.stop();
    ctr = undefined;
    await assert.rejects(fetch(`${url}/_mock/health`, { signal: AbortSignal.timeout(2000) }));
  });
});
