// A small typed client of the control API (/_mock, control.json): the
// calls tests make most, each typed from the document; `call`, `get`,
// `post`, `put` and `delete` reach every other path.
import type { components, paths } from "./generated/control";
import { HttpClient, type CallResult, type Method, type PathsWith, type CallInit, type ResponseOf } from "./http";
import { AssertionError } from "node:assert";
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { MediamockError } from "./platform";

/** The control API's schemas (`ControlSchemas["Sandbox"]`, `ControlSchemas["FailRule"]`, ...). */
export type ControlSchemas = components["schemas"];
/** The control API's paths, as openapi-typescript generated them from control.json. */
export type ControlPaths = paths;

export type Sandbox = ControlSchemas["Sandbox"];
export type SandboxSpec = ControlSchemas["SandboxSpec"];
export type FailRule = ControlSchemas["FailRule"];
export type Faults = ControlSchemas["Faults"];
export type ForcedResponse = ControlSchemas["ForcedResponse"];
export type NamedSnapshot = ControlSchemas["NamedSnapshot"];
export type Journal = ControlSchemas["Journal"];
export type JournalEntry = ControlSchemas["JournalEntry"];
export type ClientReport = ControlSchemas["ClientReport"];
/** A journal as an HTTP Archive, HAR 1.2 (`format=har`). */
export type Har = ControlSchemas["HAR"];
export type Ledger = ControlSchemas["Ledger"];
export type Health = ControlSchemas["Health"];
export type Clock = ControlSchemas["Clock"];
export type SandboxRunResult = ControlSchemas["SandboxRunResult"];
export type Workspace = ControlSchemas["Workspace"];
export type WorkspaceDetail = ControlSchemas["WorkspaceDetail"];
export type JobAction = ControlSchemas["JobAction"];
/** An operation of the service's API by its id (`getAccount`, `createGeneration`, ...), or `*` for all. */
export type OperationId = ForcedResponse["operation"];

/** The journal's filters (`operation`, `status`, `path`, `workspace_id`, `after`, `limit`, ...). */
export type JournalQuery = Omit<NonNullable<ControlPaths["/journal"]["get"]["parameters"]["query"]>, "format">;

/**
 * A client of the control API. Built with the server's control token (or
 * none), it reaches the whole server; `forSandbox(sb)` (or a sandbox's
 * control token) makes every call the sandbox's.
 */
export class ControlClient extends HttpClient<ControlPaths> {
  constructor(controlURL: string, token?: string) {
    super(controlURL, token, true);
  }

  /** The same client, acting as a sandbox (its control token). */
  forSandbox(sandbox: Pick<Sandbox, "control_token">): ControlClient {
    return this.withToken(sandbox.control_token);
  }

  /** Calls a path and returns its body, or throws a MediamockError that says what the server answered. */
  async must<M extends Method, P extends PathsWith<ControlPaths, M>>(
    method: M, path: P, init?: CallInit<ControlPaths, P, M>,
  ): Promise<ResponseOf<ControlPaths, P, M>> {
    const res: CallResult<ResponseOf<ControlPaths, P, M>> = await this.call(method, path, init);
    if (!res.ok) {
      const e = res.error.error;
      throw new MediamockError("control_error",
        `${method.toUpperCase()} /_mock${String(path)}: ${res.status} ${e?.code ?? ""} ${e?.message ?? ""}`.trim());
    }
    return res.data;
  }

  health() { return this.must("get", "/health"); }
  clock() { return this.must("get", "/clock"); }
  /** Moves the clock forward ("10m", "1h"); refused to a sandbox (the clock is shared). */
  advanceClock(duration: string) { return this.must("post", "/clock/advance", { body: { duration } }); }
  setClockMode(mode: ControlSchemas["ClockMode"]["mode"]) { return this.must("put", "/clock/mode", { body: { mode } }); }
  /** Puts a real clock back on the wall clock, dropping what advances added. */
  resyncClock() { return this.must("post", "/clock/resync", { body: {} }); }

  faults() { return this.must("get", "/faults"); }
  clearFaults() { return this.must("delete", "/faults"); }
  /** The next matching jobs fail (`{count: 1}`: the next one). */
  failNext(rule: FailRule = { count: 1 }) { return this.must("post", "/faults/fail-next", { body: rule }); }
  setFailureRate(rate: number) { return this.must("put", "/faults/failure-rate", { body: { rate } }); }
  /**
   * Forces the next `count` answers of an operation (`getAccount`, `createGeneration`, ...): any
   * status it declares, with the document's error code, or the `code` and `message`, `body` or
   * `example` given (`drift: true` answers what the document does not allow, marked as such).
   */
  forceResponses(forced: ForcedResponse) { return this.must("post", "/faults/responses", { body: forced }); }
  setLatency(operation: OperationId, ms: number) {
    return this.must("put", "/faults/latency/{operation}", { params: { operation }, body: { ms } });
  }
  /** Adds a fault rule of any kind (`{kind: "moderation", at: "processing"}`); its `id` removes it. */
  addFault(spec: ControlSchemas["FaultSpec"]) { return this.must("post", "/faults/rules", { body: spec }); }
  deleteFault(rule: string) { return this.must("delete", "/faults/rules/{rule}", { params: { rule } }); }

  /** One job's fate: `fail` (with an error code), `complete` or `stick`. */
  asset(id: number, action: "fail" | "complete" | "stick", body: JobAction = {}) {
    return this.must("post", "/assets/{id}/{action}", { params: { id, action }, body });
  }

  journal(query: NonNullable<ControlPaths["/journal"]["get"]["parameters"]["query"]> = {}) {
    return this.must("get", "/journal", { query });
  }
  /** The number of the last recorded request: pass it as `after` to {@link awaitRequest}. */
  async journalSeq(): Promise<number> { return (await this.journal({ limit: 1 })).seq; }
  /**
   * Waits until a request matching the filters (`operation`, `method`, `path`, `status`, ...) and
   * numbered after `after` (default: from now) is journaled, and returns its entry; throws
   * `request_not_seen` after `timeout` seconds (default 10, at most 55). Instead of sleeping
   * until the client has sent it.
   */
  awaitRequest(query: NonNullable<ControlPaths["/journal/wait"]["get"]["parameters"]["query"]> = {}) {
    return this.must("get", "/journal/wait", { query });
  }
  /**
   * The scope's journal as an HTTP Archive (HAR 1.2), oldest first: each exchange with its headers,
   * bodies and timings, and the mock's annotations (`_operation`, `_fault`, `_answerCut`,
   * `_findings`, ...), for DevTools, Charles, Insomnia, Postman or k6. Takes the journal's filters.
   */
  async har(query: JournalQuery = {}): Promise<Har> {
    const res = await this.call("get", "/journal", { query: { limit: 100000, ...query, format: "har" } });
    if (!res.ok) {
      throw new MediamockError("control_error", `GET /_mock/journal?format=har: ${res.status} ${res.error.error?.code ?? ""} ${res.error.error?.message ?? ""}`.trim());
    }
    return JSON.parse(Buffer.from(res.data as unknown as ArrayBuffer).toString("utf8")) as Har;
  }
  /** Writes the scope's journal as HAR 1.2 to a file, as it comes (see {@link har}); resolves to the bytes written. */
  async saveHar(file: string, query: JournalQuery = {}): Promise<number> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries({ limit: 100000, ...query, format: "har" })) if (v !== undefined) qs.set(k, String(v));
    const res = await fetch(`${this.baseURL}/journal?${qs}`, { headers: this.token ? { Authorization: `Bearer ${this.token}` } : {} });
    if (!res.ok || !res.body) {
      throw new MediamockError("control_error", `GET /_mock/journal?format=har: ${res.status} ${(await res.text()).slice(0, 500)}`);
    }
    let written = 0;
    const counted = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream).on("data", (c: Buffer) => { written += c.length; });
    await pipeline(counted, createWriteStream(file));
    return written;
  }
  coverage() { return this.must("get", "/coverage"); }
  /**
   * The client report of the scope: how its clients polled, spent the rate window, repeated
   * paid creations, fetched files; each finding with a stable id, a severity, a count and the
   * request ids that show it. `fail_on` names finding ids or severities that make it `failed`.
   */
  report(query: { fail_on?: string; workspace_id?: number } = {}): Promise<ClientReport> {
    return this.must("get", "/report", { query: { ...query, format: "json" } }) as Promise<ClientReport>;
  }
  /**
   * Throws an AssertionError, with each finding and its fix, when the report has a finding
   * that matches `failOn` (by default every warning and error): `await control.assertGoodClient()`
   * at the end of a test.
   */
  async assertGoodClient(failOn: string[] = ["warning", "error"]): Promise<void> {
    const fail_on = failOn.join(",");
    const r = await this.report({ fail_on });
    if (!r.failed) return;
    const text = await this.call("get", "/report", { query: { fail_on, format: "text" } });
    const body = text.ok ? Buffer.from(text.data as unknown as ArrayBuffer).toString("utf8") : JSON.stringify(r.findings, null, 2);
    throw new AssertionError({ message: `the client broke rules of good behaviour:\n${body}` });
  }
  workspaces() { return this.must("get", "/workspaces"); }
  workspace(id: number) { return this.must("get", "/workspaces/{id}", { params: { id } }); }
  ledger(workspaceID: number) { return this.must("get", "/workspaces/{id}/ledger", { params: { id: workspaceID } }); }
  /** Saves the scope's state on the server under `name` (the whole state, or the sandbox's), kept across restarts. */
  saveSnapshot(name: string, description?: string) {
    return this.must("put", "/snapshots/{name}", { params: { name }, body: description === undefined ? {} : { description } });
  }
  /** The scope's named snapshots, by name. */
  snapshots() { return this.must("get", "/snapshots"); }
  /** Puts the scope's state back as its snapshot `name` holds it (a sandbox's: that sandbox alone). */
  restoreSnapshot(name: string) { return this.must("post", "/snapshots/{name}/restore", { params: { name } }); }
  deleteSnapshot(name: string) { return this.must("delete", "/snapshots/{name}", { params: { name } }); }
  /** Starts the whole server afresh from its fixtures (removes every sandbox). */
  reset() { return this.must("post", "/reset"); }

  /** Creates a sandbox: a fresh workspace (Acme Studio's copy unless `from` says otherwise) with keys of its own. */
  createSandbox(spec: SandboxSpec = {}) { return this.must("post", "/sandboxes", { body: spec }); }
  sandboxes() { return this.must("get", "/sandboxes"); }
  deleteSandbox(id: string) { return this.must("delete", "/sandboxes/{sandbox}", { params: { sandbox: id } }); }
  resetSandbox(id: string) { return this.must("post", "/sandboxes/{sandbox}/reset", { params: { sandbox: id } }); }
  /** Applies now every event of the sandbox due within `limit` ("1h"): its jobs end, without moving the shared clock. */
  runSandbox(id: string, limit = "1h") {
    return this.must("post", "/sandboxes/{sandbox}/run", { params: { sandbox: id }, body: { limit } });
  }
}
