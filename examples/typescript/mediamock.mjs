// A small client of mediamock for the examples: the service's API and the
// mock's control API, with fetch (Node 20, no packages).
import assert from "node:assert/strict";

export const ROOT = (process.env.MEDIAMOCK_URL ?? "http://127.0.0.1:8080").replace(/\/$/, "");
export const API = `${ROOT}/api/v1`;

/** Makes a request; JSON bodies are sent and read as JSON. */
export async function call(method, url, { body, key, form } = {}) {
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

/**
 * Calls the mock's control API (JSON on every state change), with a
 * sandbox's control token when given: the call is then the sandbox's.
 */
export async function control(method, path, body = {}, { token, want = 200 } = {}) {
  const res = await call(method, `${ROOT}/_mock${path}`, { body: method === "GET" ? undefined : body, key: token });
  assert.equal(res.status, want, JSON.stringify(res.data));
  return res.data;
}

/** Creates a sandbox: a fresh workspace started as a fixture workspace, with keys of its own. */
export function newSandbox(spec = {}) {
  return control("POST", "/sandboxes", spec, { want: 201 });
}

/** Deletes a sandbox and everything it made. */
export function deleteSandbox(sb) {
  return control("DELETE", `/sandboxes/${sb.id}`, {}, { token: sb.control_token });
}

