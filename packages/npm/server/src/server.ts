// startMediamock: runs the mockserver binary of this platform on a free
// loopback port with a temporary state file, waits until it is healthy,
// and stops it (and removes the file) on stop() or when this process exits.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { components as ApiComponents, paths as ApiPaths } from "./generated/api";
import { ControlClient, type Sandbox, type SandboxSpec } from "./control";
import { HttpClient } from "./http";
import { MediamockError, resolveBinary } from "./platform";

/** The service API's schemas (`ApiSchemas["GenerationRequest"]`, `ApiSchemas["Generation"]`, ...). */
export type ApiSchemas = ApiComponents["schemas"];
export type { ApiPaths };
/** A typed client of the service's API (`/api/v1`), with one bearer key. */
export type ApiClient = HttpClient<ApiPaths>;

export interface MediamockOptions {
  /** Port on 127.0.0.1; a free one when left out (recommended). A busy port is an error. */
  port?: number;
  /** Clock mode: "real" (default; shared by sandboxes), "manual" or "virtual". */
  clock?: "real" | "manual" | "virtual";
  /** Divides every simulated duration; 100 by default (an image completes in tens of milliseconds). */
  speed?: number;
  /** Seed of every random choice. */
  seed?: number;
  /** A fixture file instead of the embedded default. */
  fixtures?: string;
  /** Protect the control API with this token (MOCKSERVER_CONTROL_TOKEN by default). */
  controlToken?: string;
  /** The server's log level: "warn" by default. */
  logLevel?: "debug" | "info" | "warn" | "error";
  /** Where the server's log goes: kept (the last lines are in errors) by default, or this process's stderr. */
  log?: "keep" | "inherit";
  /** More mockserver flags (`["--strict"]`); `mockserver --help` lists them. */
  args?: string[];
  /** The binary to run; MEDIAMOCK_BINARY, else this platform's package, by default. */
  binary?: string;
  /** How long to wait for the server to be healthy; 15 seconds by default. */
  startTimeoutMs?: number;
  /** Environment of the server process; this process's by default. */
  env?: NodeJS.ProcessEnv;
}

/** A test credential of the fixtures (`mockserver keys` lists them). */
export interface FixtureKey {
  token: string;
  type: string;
  name: string;
  scopes: string[];
  workspace: string;
  workspaceId: number;
  plan: string;
}

/** A running server. */
export interface Mediamock {
  /** The root: `http://127.0.0.1:PORT`. */
  url: string;
  /** The service's API: `http://127.0.0.1:PORT/api/v1`. */
  baseURL: string;
  /** The control API: `http://127.0.0.1:PORT/_mock`. */
  controlURL: string;
  /** The fixtures' keys; `keys[0]` is the first workspace's key with every scope (`mk_test_all_scopes`). */
  keys: FixtureKey[];
  /** The first workspace's API key with every scope. */
  apiKey: string;
  /** A typed client of the control API, as the whole server. */
  control: ControlClient;
  /** A typed client of the service's API with a key (`apiKey` by default). */
  api(key?: string): ApiClient;
  /** Creates a sandbox (a fresh workspace with keys of its own); `sandbox.control` acts as it. */
  sandbox(spec?: SandboxSpec): Promise<MediamockSandbox>;
  /** The server process's id (-1 for a server connectMediamock reached). */
  pid: number;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its state. Safe to call twice. A server connectMediamock reached is left running. */
  stop(): Promise<void>;
}

/** A sandbox with clients bound to it. */
export interface MediamockSandbox {
  id: string;
  /** The sandbox's API key with the most scopes. */
  apiKey: string;
  /** Its keys by name: `all_scopes`, `read_only`, ... */
  keys: Record<string, string>;
  /** Its control token: every control call with it is the sandbox's. */
  controlToken: string;
  baseURL: string;
  workspaceId: number;
  /** The control API as the sandbox. */
  control: ControlClient;
  /** The service's API with the sandbox's key (`apiKey` by default). */
  api(key?: string): ApiClient;
  /** Ends now every job of the sandbox due within `limit` ("1h"), without moving the shared clock. */
  run(limit?: string): Promise<unknown>;
  /** Deletes the sandbox and everything it made. Safe to call twice. */
  delete(): Promise<void>;
  /** The raw answer of POST /_mock/sandboxes. */
  raw: Sandbox;
}

// Children still running, killed when this process exits.
const running = new Set<{ child: ChildProcess; dir: string }>();
let hooked = false;
function hookExit() {
  if (hooked) return;
  hooked = true;
  process.once("exit", () => {
    for (const r of running) {
      try { r.child.kill("SIGKILL"); } catch { /* gone */ }
      try { rmSync(r.dir, { recursive: true, force: true }); } catch { /* best effort */ }
    }
  });
  // A signal that would end this process ends the servers too, then ends
  // the process as the signal would have (unless someone else handles it).
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = () => {
      for (const r of running) {
        try { r.child.kill("SIGKILL"); } catch { /* gone */ }
        try { rmSync(r.dir, { recursive: true, force: true }); } catch { /* best effort */ }
      }
      running.clear();
      if (process.listenerCount(sig) === 1) {
        process.removeListener(sig, onSignal);
        process.kill(process.pid, sig);
      }
    };
    process.on(sig, onSignal);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a process is alive (signal 0 asks without sending). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the folders of servers whose owner is gone (killed before it
 * could remove them): `mediamock-*` under the temporary folder, with an
 * owner.pid of a dead process. A folder without one is left alone (its
 * owner may be writing it, or it is not ours).
 */
function removeStale(tmp: string): void {
  let names: string[];
  try { names = readdirSync(tmp); } catch { return; }
  for (const name of names) {
    if (!name.startsWith("mediamock-")) continue;
    const dir = join(tmp, name);
    try {
      let owner = NaN;
      try { owner = Number(readFileSync(join(dir, "owner.pid"), "utf8").trim()); } catch { /* none */ }
      if (Number.isInteger(owner) && owner > 0 && !alive(owner)) rmSync(dir, { recursive: true, force: true });
    } catch { /* another process's, or gone already */ }
  }
}

/**
 * Starts a mediamock server for tests and resolves once it is healthy.
 *
 *     const mm = await startMediamock();
 *     // mm.baseURL, mm.apiKey, mm.control.failNext(), mm.api().post("/generations", {body})
 *     await mm.stop();
 */
export async function startMediamock(options: MediamockOptions = {}): Promise<Mediamock> {
  const env = options.env ?? process.env;
  const binary = options.binary ?? resolveBinary(env);
  removeStale(tmpdir());
  const dir = mkdtempSync(join(tmpdir(), "mediamock-"));
  const db = join(dir, "state.db");
  const addr = `127.0.0.1:${options.port ?? 0}`;
  const controlToken = options.controlToken ?? (env.MOCKSERVER_CONTROL_TOKEN || undefined);
  const args = [
    "--addr", addr, "--db", db, "--reset",
    "--clock", options.clock ?? "real",
    "--speed", String(options.speed ?? 100),
    "--log-level", options.logLevel ?? "warn",
    // The server stops when its standard input ends: this process holds
    // the pipe, and the system closes it when this process dies, even by
    // SIGKILL.
    "--exit-with-parent",
  ];
  if (options.seed !== undefined) args.push("--seed", String(options.seed));
  if (options.fixtures) args.push("--fixtures", options.fixtures);
  if (controlToken) args.push("--control-token", controlToken);
  args.push(...(options.args ?? []));

  hookExit();
  let child: ChildProcess;
  const log: string[] = [];
  const inherit = options.log === "inherit";
  try {
    child = spawn(binary, args, {
      env, stdio: ["pipe", inherit ? "inherit" : "pipe", inherit ? "inherit" : "pipe"], windowsHide: true,
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new MediamockError("exited_at_start", `cannot run ${binary}: ${(err as Error).message}`);
  }
  const entry = { child, dir };
  running.add(entry);
  // Who owns the folder: the next start removes it once this process is
  // gone (a runner killed with SIGKILL cannot remove it itself).
  try { writeFileSync(join(dir, "owner.pid"), String(process.pid)); } catch { /* best effort */ }
  const keep = (chunk: Buffer) => {
    log.push(chunk.toString("utf8"));
    while (log.length > 200) log.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  // Neither the process nor its pipes keep this process alive: a test
  // that forgets stop() still ends, and the exit hook kills the server.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  child.stdin?.on("error", () => { /* the server is gone */ });
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();

  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  const exitedP = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => { exited = { code, signal }; running.delete(entry); resolve(); });
    child.once("error", (err) => { spawnError = err; exited ??= { code: null, signal: null }; running.delete(entry); resolve(); });
  });
  const tail = () => log.join("").trim().split("\n").slice(-15).join("\n");
  const cleanup = () => rmSync(dir, { recursive: true, force: true });

  const timeout = options.startTimeoutMs ?? 15_000;
  const deadline = Date.now() + timeout;
  let url = "";
  for (;;) {
    if (spawnError) {
      cleanup();
      throw new MediamockError("exited_at_start", `cannot run ${binary}: ${spawnError.message}`);
    }
    if (exited) {
      cleanup();
      const out = tail();
      if (/address already in use|Only one usage of each socket address/i.test(out)) {
        throw new MediamockError("port_busy",
          `port ${options.port} on 127.0.0.1 is busy (another process listens there): leave port out for a free one, or pick another.\n${out}`);
      }
      throw new MediamockError("exited_at_start",
        `mockserver (${binary}) exited before it was ready (${exited.signal ? `signal ${exited.signal}` : `exit code ${exited.code}`})` +
        (out ? `:\n${out}` : "; it printed nothing"));
    }
    if (Date.now() > deadline) {
      await stopChild(child, exitedP);
      cleanup();
      throw new MediamockError("start_timeout",
        `mockserver (${binary}) was not healthy within ${timeout} ms; it was stopped.` + (tail() ? `\n${tail()}` : ""));
    }
    if (!url) {
      try { url = readFileSync(db + ".addr", "utf8").trim(); } catch { /* not yet */ }
    }
    if (url) {
      try {
        const res = await fetch(`${url}/_mock/health`, { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer();
        if (res.ok) break;
      } catch { /* not yet */ }
    }
    await sleep(20);
  }

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      await stopChild(child, exitedP);
      running.delete(entry);
      cleanup();
    })();
    return stopped;
  };
  try {
    return await describe(url, controlToken, child.pid ?? -1, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Uses a server that runs already (a container in CI, a shared one):
 * the same object as startMediamock's, whose stop() leaves the server be.
 * useMediamock and the pytest plugin do this when MEDIAMOCK_URL is set.
 */
export async function connectMediamock(url: string, options: { controlToken?: string } = {}): Promise<Mediamock> {
  const root = url.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
  const controlToken = options.controlToken ?? (process.env.MOCKSERVER_CONTROL_TOKEN || undefined);
  try {
    const res = await fetch(`${root}/_mock/health`, { signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`health check answered ${res.status}`);
  } catch (err) {
    throw new MediamockError("control_error", `no healthy mediamock server at ${root}: ${(err as Error).message}`);
  }
  return describe(root, controlToken, -1, async () => {});
}

async function describe(url: string, controlToken: string | undefined, pid: number, stop: () => Promise<void>): Promise<Mediamock> {
  const controlURL = `${url}/_mock`;
  const baseURL = `${url}/api/v1`;
  const control = new ControlClient(controlURL, controlToken);
  const keys = await fixtureKeys(control);
  const apiKey = keys[0]?.token ?? "mk_test_all_scopes";
  return {
    url, baseURL, controlURL, keys, apiKey, control, pid, stop,
    api: (key?: string) => new HttpClient<ApiPaths>(baseURL, key ?? apiKey),
    sandbox: (spec?: SandboxSpec) => newSandbox(control, baseURL, spec),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((r) => { timer = setTimeout(() => r(false), 5000); }),
  ]);
  clearTimeout(timer);
  if (!done) {
    child.kill("SIGKILL");
    await exited;
  }
}

/**
 * The fixtures' keys, read from the control API, the first workspace's broadest API key first.
 * Sandboxes are not fixtures: other suites make and delete them meanwhile, so they are passed over.
 */
async function fixtureKeys(control: ControlClient): Promise<FixtureKey[]> {
  const keys: FixtureKey[] = [];
  for (const ws of await control.workspaces()) {
    if (ws.sandbox_id) continue;
    const detail = await control.workspace(ws.id);
    for (const t of detail.tokens ?? []) {
      keys.push({ token: t.token, type: t.type, name: t.name, scopes: [...t.scopes], workspace: ws.name, workspaceId: ws.id, plan: ws.plan });
    }
  }
  const first = keys[0]?.workspaceId;
  const best = keys
    .filter((k) => k.workspaceId === first && k.type === "api_key")
    .sort((a, b) => b.scopes.length - a.scopes.length)[0];
  return best ? [best, ...keys.filter((k) => k !== best)] : keys;
}

async function newSandbox(control: ControlClient, baseURL: string, spec: SandboxSpec = {}): Promise<MediamockSandbox> {
  const raw = await control.createSandbox(spec);
  const own = control.forSandbox(raw);
  let deleted: Promise<void> | undefined;
  return {
    id: raw.id, apiKey: raw.api_key, keys: { ...raw.keys }, controlToken: raw.control_token,
    baseURL: raw.base_url ?? baseURL, workspaceId: raw.workspace_id, control: own, raw,
    api: (key?: string) => new HttpClient<ApiPaths>(raw.base_url ?? baseURL, key ?? raw.api_key),
    run: (limit = "1h") => own.runSandbox(raw.id, limit),
    delete() {
      deleted ??= own.deleteSandbox(raw.id).then(() => undefined);
      return deleted;
    },
  };
}
