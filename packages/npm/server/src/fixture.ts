// useMediamock: one server per test file, one sandbox per test, for
// node:test, Vitest and Jest alike. It registers the hooks itself.
import type { SandboxSpec } from "./control";
import { connectMediamock, startMediamock, type Mediamock, type MediamockOptions, type MediamockSandbox } from "./server";

// node:test's hooks take options ({ timeout }), Vitest's and Jest's a number.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Hook = (fn: () => any, second?: any) => unknown;

/** The runner's hooks; node:test names them before/after, Vitest and Jest beforeAll/afterAll. */
export interface Hooks {
  before?: Hook;
  after?: Hook;
  beforeAll?: Hook;
  afterAll?: Hook;
  /** Needed when each test gets a sandbox (the default). */
  beforeEach?: Hook;
  afterEach?: Hook;
}

export interface UseMediamockOptions extends MediamockOptions {
  /**
   * The runner's hooks. Left out: the globals (Vitest with `globals: true`,
   * Jest), else node:test's. With Vitest without globals pass
   * `{ beforeAll, afterAll, beforeEach, afterEach }` from "vitest".
   */
  hooks?: Hooks;
  /** The sandbox every test gets (`{ from: "Pixel Garage" }`); `false` for none. */
  sandbox?: SandboxSpec | false;
  /**
   * A running server to use instead of starting one (its root or its
   * /api/v1 URL); MEDIAMOCK_URL by default. Its sandboxes keep the tests
   * apart from anyone else's.
   */
  url?: string;
}

/** What a test file sees: the file's server, and the running test's sandbox. */
export interface MediamockFixture {
  /** The file's server (after the first hook ran). */
  readonly server: Mediamock;
  /** The running test's sandbox, deleted after the test. */
  readonly sandbox: MediamockSandbox;
}

interface Picked { all: Hook; done: Hook; each?: Hook; eachDone?: Hook; timeout: (ms: number) => unknown }

function pickHooks(given?: Hooks): Picked {
  const g = globalThis as unknown as Partial<Record<"beforeAll" | "afterAll" | "beforeEach" | "afterEach", Hook>>;
  let h: Hooks | undefined = given;
  if (!h && g.beforeAll && g.afterAll && g.beforeEach && g.afterEach) {
    h = { beforeAll: g.beforeAll, afterAll: g.afterAll, beforeEach: g.beforeEach, afterEach: g.afterEach };
  }
  if (!h && (process.env.VITEST || process.env.JEST_WORKER_ID)) {
    // Registering with node:test here would do nothing, and every test
    // would then fail with "no sandbox here": say the fix instead.
    const runner = process.env.VITEST ? "vitest" : "@jest/globals";
    throw new TypeError(`useMediamock: ${process.env.VITEST ? "Vitest" : "Jest"} runs without globals here, so there are no hooks to register with. ` +
      `Pass them: import { beforeAll, afterAll, beforeEach, afterEach } from "${runner}"; ` +
      `useMediamock({ hooks: { beforeAll, afterAll, beforeEach, afterEach } }) ` +
      `(or turn the globals on: test.globals = true in vitest.config${process.env.VITEST ? "" : ", injectGlobals in Jest"}).`);
  }
  if (!h) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const t = require("node:test") as Hooks;
    h = t;
  }
  const nodeStyle = !h.beforeAll && !!h.before;
  const all = h.beforeAll ?? h.before;
  const done = h.afterAll ?? h.after;
  if (!all || !done) throw new TypeError("useMediamock: the hooks need beforeAll and afterAll (or before and after)");
  return { all, done, each: h.beforeEach, eachDone: h.afterEach, timeout: (ms) => (nodeStyle ? { timeout: ms } : ms) };
}

/**
 * Starts a server for the test file (or uses the one at MEDIAMOCK_URL) and
 * gives each test a sandbox of its own:
 *
 *     const mm = useMediamock();
 *     test("refund", async () => {
 *       await mm.sandbox.control.failNext();
 *       const res = await mm.sandbox.api().post("/generations", { body: {...} });
 *     });
 */
export function useMediamock(options: UseMediamockOptions = {}): MediamockFixture {
  const { hooks, sandbox: spec, url = process.env.MEDIAMOCK_URL, ...serverOptions } = options;
  const h = pickHooks(hooks);
  let server: Mediamock | undefined;
  let sandbox: MediamockSandbox | undefined;
  const startTimeout = (serverOptions.startTimeoutMs ?? 15_000) + 5_000;
  h.all(async () => {
    server = url
      ? await connectMediamock(url, { controlToken: serverOptions.controlToken })
      : await startMediamock(serverOptions);
  }, h.timeout(startTimeout));
  h.done(async () => { await server?.stop(); server = undefined; }, h.timeout(15_000));
  if (spec !== false) {
    if (!h.each || !h.eachDone) throw new TypeError("useMediamock: a sandbox per test needs the beforeEach and afterEach hooks (or { sandbox: false })");
    h.each(async () => {
      if (!server) throw new Error("useMediamock: the server did not start (see the first hook's error)");
      sandbox = await server.sandbox(spec ?? {});
    });
    h.eachDone(async () => {
      const sb = sandbox;
      sandbox = undefined;
      await sb?.delete();
    });
  }
  return {
    get server() {
      if (!server) throw new Error("useMediamock: the server is not running here (use it inside a test or a hook)");
      return server;
    },
    get sandbox() {
      if (!sandbox) throw new Error(spec === false
        ? "useMediamock: sandboxes are off ({ sandbox: false })"
        : "useMediamock: no sandbox here (it exists inside a test, between beforeEach and afterEach)");
      return sandbox;
    },
  };
}
