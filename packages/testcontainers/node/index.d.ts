import { AbstractStartedContainer, GenericContainer, StartedTestContainer } from "testcontainers";

/** The port the image listens on (MOCKSERVER_ADDR=0.0.0.0:8080). */
export declare const PORT: 8080;
/** Where withFixtures copies the fixture file in the container. */
export declare const FIXTURES_PATH: "/fixtures.json";
/** The default fixture's key with every scope (Acme Studio, pro). */
export declare const API_KEY: "mk_test_all_scopes";
/** The default fixture's API keys by name (with withFixtures, the keys are the file's). */
export declare const DEFAULT_KEYS: Readonly<{
  all_scopes: "mk_test_all_scopes";
  read_only: "mk_test_read_only";
  generate_only: "mk_test_generate_only";
  publish_only: "mk_test_publish_only";
  free_plan: "mk_test_free_plan";
  business: "mk_test_business";
  no_credits: "mk_test_no_credits";
}>;

export type ClockMode = "real" | "virtual" | "manual";

export declare class MediamockContainer extends GenericContainer {
  constructor(image: string);
  protected controlToken: string;
  /** The seed of the fixtures' fake data (MOCKSERVER_SEED). */
  withSeed(seed: number | bigint | string): this;
  /** The clock mode (MOCKSERVER_CLOCK). */
  withClock(mode: ClockMode): this;
  /** Copies a fixture file into the container (FIXTURES_PATH) and loads it (MOCKSERVER_FIXTURES). */
  withFixtures(hostPath: string): this;
  /** Protects the control API with a token (MOCKSERVER_CONTROL_TOKEN); this module's calls send it. */
  withControlToken(token: string): this;
  start(): Promise<StartedMediamockContainer>;
}

/** The body of POST /_mock/sandboxes (see control.json). */
export interface SandboxRequest {
  name?: string;
  from?: string;
  plan?: string;
  credits?: number;
  rate_limit_per_minute?: number;
  empty_library?: boolean;
  keys?: { name: string; type?: string; scopes?: string[] }[];
  [field: string]: unknown;
}

export interface Sandbox {
  id: string;
  workspaceId: number;
  /** The sandbox's API key with the most scopes. */
  apiKey: string;
  /** Its keys by name: all_scopes, read_only, ... */
  keys: Record<string, string>;
  /** sbc_...: reaches this sandbox alone on the control API. */
  controlToken: string;
  /** The REST API's base URL as seen from the test. */
  baseUrl: string;
  /** The whole answer of POST /_mock/sandboxes. */
  raw: Record<string, unknown>;
  /** Deletes the sandbox (DELETE /_mock/sandboxes/{id}, with its control token). */
  delete(): Promise<unknown>;
}

export declare class StartedMediamockContainer extends AbstractStartedContainer {
  constructor(startedTestContainer: StartedTestContainer, controlToken?: string);
  /** The server's control token, "" when it has none. */
  readonly controlToken: string;
  /** The default fixture's keys by name. */
  readonly keys: Record<string, string>;
  /** The key with every scope (API_KEY). */
  readonly apiKey: string;
  /** http://host:port, as seen from the test. */
  getUrl(): string;
  /** getUrl() + "/api/v1". */
  getBaseUrl(): string;
  /** getUrl() + "/_mock". */
  getControlUrl(): string;
  createSandbox(body?: SandboxRequest): Promise<Sandbox>;
}
