// The helper's contract: what it exposes, which binary it runs, and a clear
// error (with no process left behind) for every way a start can fail.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MediamockError, currentPlatform, resolveBinary, startMediamock, version } from "@mediamock/server";

/** Whether a process still runs (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function rejects(p: Promise<unknown>, code: string, pattern: RegExp): Promise<MediamockError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof MediamockError, String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.message, pattern);
    return err;
  }
  assert.fail(`expected a ${code} error`);
}

test("startMediamock: url, baseURL, keys, control, stop", async () => {
  const mm = await startMediamock({ seed: 7 });
  try {
    assert.match(mm.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(mm.baseURL, `${mm.url}/api/v1`);
    assert.equal(mm.apiKey, "mk_test_all_scopes");
    assert.equal(mm.keys[0]?.token, "mk_test_all_scopes");
    assert.ok(mm.keys.some((k) => k.token === "mk_test_no_credits" && k.workspace === "Empty Wallet Co"));
    assert.equal((await mm.control.health()).status, "ok");
    const account = await mm.api().get("/account");
    assert.ok(account.ok);
    assert.equal(account.data.workspace_name, "Acme Studio");
    const denied = await mm.api("mk_test_read_only").post("/generations", {
      body: { modality: "image", model_id: "flux-2-pro", prompt: "x" },
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.error?.error?.code, "insufficient_scope");
  } finally {
    await mm.stop();
    await mm.stop(); // twice is fine
  }
  assert.equal(alive(mm.pid), false, "the server is gone after stop()");
});

test("the binary is this platform's package's, at the package's version", () => {
  const bin = resolveBinary();
  assert.match(bin, new RegExp(`@mediamock[\\\\/]server-${currentPlatform()}[\\\\/]bin[\\\\/]mockserver`));
  assert.doesNotMatch(version(), /source/);
});

test("a platform without a binary is a clear error", () => {
  const env = { ...process.env, MEDIAMOCK_PLATFORM: "freebsd-riscv64" };
  assert.throws(() => resolveBinary(env), (err: MediamockError) =>
    err.code === "unsupported_platform" && /freebsd-riscv64/.test(err.message) && /MEDIAMOCK_BINARY/.test(err.message));
});

test("another platform's package, not installed here, is named in the error", async () => {
  const other = currentPlatform() === "darwin-arm64" ? "linux-arm64" : "darwin-arm64";
  const env = { ...process.env, MEDIAMOCK_PLATFORM: other };
  await rejects(startMediamock({ env }), "binary_missing", new RegExp(`@mediamock/server-${other}.*MEDIAMOCK_BINARY`, "s"));
});

test("a missing binary is a clear error", async () => {
  const env = { ...process.env, MEDIAMOCK_BINARY: "/nonexistent/mockserver" };
  await rejects(startMediamock({ env }), "binary_missing", /MEDIAMOCK_BINARY.*nonexistent/);
});

test("a busy port is a clear error", async () => {
  const blocker: Server = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  const port = (blocker.address() as { port: number }).port;
  try {
    await rejects(startMediamock({ port }), "port_busy", new RegExp(`port ${port} .*busy`));
  } finally {
    blocker.close();
  }
});

test("a server that dies at start is a clear error", async () => {
  const err = await rejects(startMediamock({ args: ["--clock", "sideways"] }), "exited_at_start", /exit code 2.*clock/s);
  assert.match(err.message, /sideways/);
});

test("a server that never gets healthy is stopped after the timeout", { skip: process.platform === "win32" }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "fake-mockserver-"));
  const fake = join(dir, "mockserver");
  writeFileSync(fake, "#!/bin/sh\necho \"$$\" > \"$0.pid\"\nexec sleep 300\n");
  chmodSync(fake, 0o755);
  try {
    await rejects(startMediamock({ binary: fake, startTimeoutMs: 500 }), "start_timeout", /not healthy within 500 ms/);
    const pid = Number(readFileSync(`${fake}.pid`, "utf8"));
    assert.equal(alive(pid), false, "the process that never got healthy was stopped");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
