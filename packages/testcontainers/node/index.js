// Testcontainers module for mediamock, the stateful mock of the media
// generation service's REST API v1. See index.d.ts for the types.
import { AbstractStartedContainer, GenericContainer, Wait } from "testcontainers";

/** The port the image listens on (MOCKSERVER_ADDR=0.0.0.0:8080). */
export const PORT = 8080;

/** Where withFixtures copies the fixture file in the container. */
export const FIXTURES_PATH = "/fixtures.json";

/** The default fixture's key with every scope (Acme Studio, pro). */
export const API_KEY = "mk_test_all_scopes";

/**
 * The default fixture's API keys by name, as `mockserver keys` prints them:
 * fixed strings of the embedded fixture (with withFixtures, the keys are the file's).
 */
export const DEFAULT_KEYS = Object.freeze({
  all_scopes: "mk_test_all_scopes",
  read_only: "mk_test_read_only",
  generate_only: "mk_test_generate_only",
  publish_only: "mk_test_publish_only",
  free_plan: "mk_test_free_plan",
  business: "mk_test_business",
  no_credits: "mk_test_no_credits",
});

export class MediamockContainer extends GenericContainer {
  /** @param {string} image a mediamock image, e.g. one built from the repository's Dockerfile */
  constructor(image) {
    super(image);
    this.controlToken = "";
    this.withExposedPorts(PORT)
      .withWaitStrategy(Wait.forHttp("/_mock/health", PORT).forStatusCode(200))
      .withStartupTimeout(60_000);
  }

  /** The seed of the fixtures' fake data (MOCKSERVER_SEED). */
  withSeed(seed) {
    return this.withEnvironment({ MOCKSERVER_SEED: String(seed) });
  }

  /** The clock mode (MOCKSERVER_CLOCK): "real" (the default), "virtual" or "manual". */
  withClock(mode) {
    return this.withEnvironment({ MOCKSERVER_CLOCK: mode });
  }

  /** Copies a fixture file into the container and loads it in place of the embedded default. */
  withFixtures(hostPath) {
    return this.withCopyFilesToContainer([{ source: hostPath, target: FIXTURES_PATH, mode: 0o644 }])
      .withEnvironment({ MOCKSERVER_FIXTURES: FIXTURES_PATH });
  }

  /** Protects the control API (/_mock) with a token (MOCKSERVER_CONTROL_TOKEN); this module's calls send it. */
  withControlToken(token) {
    this.controlToken = token;
    return this.withEnvironment({ MOCKSERVER_CONTROL_TOKEN: token });
  }

  async start() {
    return new StartedMediamockContainer(await super.start(), this.controlToken);
  }
}

export class StartedMediamockContainer extends AbstractStartedContainer {
  constructor(startedTestContainer, controlToken = "") {
    super(startedTestContainer);
    /** The server's control token, "" when it has none. */
    this.controlToken = controlToken;
    /** The default fixture's keys by name. */
    this.keys = { ...DEFAULT_KEYS };
    /** The key with every scope. */
    this.apiKey = API_KEY;
  }

  /** The server's root, http://host:port, as seen from the test. */
  getUrl() {
    return `http://${this.getHost()}:${this.getMappedPort(PORT)}`;
  }

  /** The REST API's base URL, getUrl() + "/api/v1". */
  getBaseUrl() {
    return `${this.getUrl()}/api/v1`;
  }

  /** The control API's root, getUrl() + "/_mock". */
  getControlUrl() {
    return `${this.getUrl()}/_mock`;
  }

  /**
   * Creates a sandbox (POST /_mock/sandboxes, with the server's control token
   * when it has one): a fresh workspace with its own keys and control token.
   * `delete()` removes it (with the sandbox's own control token).
   */
  async createSandbox(body = {}) {
    const control = this.getControlUrl();
    const raw = await call("POST", `${control}/sandboxes`, this.controlToken, body, 201);
    const sandbox = {
      id: raw.id,
      workspaceId: raw.workspace_id,
      apiKey: raw.api_key,
      keys: raw.keys,
      controlToken: raw.control_token,
      baseUrl: this.getBaseUrl(),
      raw,
      delete: () => call("DELETE", `${control}/sandboxes/${encodeURIComponent(raw.id)}`, raw.control_token, {}),
    };
    if (!sandbox.id || !sandbox.apiKey || !sandbox.controlToken) {
      throw new Error(`mediamock sandbox: incomplete answer: ${JSON.stringify(raw)}`);
    }
    return sandbox;
  }
}

async function call(method, url, token, body, want) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const resp = await fetch(url, { method, headers, body: JSON.stringify(body ?? {}) });
  const text = await resp.text();
  if ((want && resp.status !== want) || !resp.ok) {
    throw new Error(`mediamock: ${method} ${url}: ${resp.status}: ${text.trim()}`);
  }
  return text ? JSON.parse(text) : {};
}
