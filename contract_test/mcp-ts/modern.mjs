// Checks the mock's MCP server with the official TypeScript SDK's client
// of the current revision (@modelcontextprotocol/client 2.x), pinned to the
// sessionless revision 2026-07-28, as a 2026 agent connects: no initialize,
// no session, server/discover, then every method the door offers, each
// request carrying Mcp-Method and Mcp-Name. Its fetch keeps every raw
// answer, so the check reads what the client's parsing drops (resultType).
// Raw requests then hold the door to the revision where the client cannot
// be made to err: a mismatched or missing standard header (-32020) and a
// version the server does not speak (-32022).
//
//   MCP_URL=http://127.0.0.1:8080/mcp node modern.mjs
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { step, assert, done } from "./steps.mjs";

const url = new URL(process.env.MCP_URL ?? "http://127.0.0.1:8080/mcp");
const key = process.env.MCP_KEY ?? "mk_test_all_scopes";
const revision = "2026-07-28";

// Every exchange the client makes: its request headers and method, and the
// raw answer.
const exchanges = [];
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
  fetch: async (input, init) => {
    const res = await fetch(input, init);
    const headers = new Headers(init?.headers);
    const body = res.headers.get("content-type")?.startsWith("application/json") ? await res.clone().text() : "";
    exchanges.push({ method: headers.get("mcp-method"), name: headers.get("mcp-name"), headers, status: res.status, body });
    return res;
  },
});
const client = new Client({ name: "mediamock-mcp-modern-check", version: "1.0.0" }, { versionNegotiation: { mode: { pin: revision } } });

// last is the raw result of the client's last request of a method.
function last(method) {
  const x = exchanges.findLast((e) => e.method === method);
  assert(x, `no ${method} request seen`);
  const msg = JSON.parse(x.body);
  assert(msg.result, `${method}: no result: ${x.body.slice(0, 300)}`);
  return { x, result: msg.result };
}

// revisionResult holds a raw result to the revision: complete, named by
// the server, with the cache hints of a list or a read.
function revisionResult(method, scope) {
  const { x, result } = last(method);
  assert(x.headers.get("mcp-protocol-version") === revision, `${method}: sent Mcp-Protocol-Version ${x.headers.get("mcp-protocol-version")}`);
  assert(result.resultType === "complete", `${method}: resultType ${result.resultType}`);
  assert(result._meta?.["io.modelcontextprotocol/serverInfo"]?.name === "mediamock", `${method}: no serverInfo in _meta: ${JSON.stringify(result._meta)}`);
  if (scope) {
    assert(result.cacheScope === scope, `${method}: cacheScope ${result.cacheScope}, want ${scope}`);
    assert(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, `${method}: ttlMs ${result.ttlMs}`);
  }
  return { x, result };
}

await step("connect pinned to 2026-07-28: server/discover, no session", async () => {
  await client.connect(transport);
  assert(client.getNegotiatedProtocolVersion() === revision, `negotiated ${client.getNegotiatedProtocolVersion()}`);
  assert(!transport.sessionId, `a session id ${transport.sessionId}`);
  assert(!exchanges.some((e) => e.body.includes('"method":"initialize"')), "sent initialize");
  const { result } = revisionResult("server/discover");
  assert(result.supportedVersions.includes(revision), `supportedVersions ${result.supportedVersions}`);
});

await step("tools/list, resources/list, resources/templates/list: the revision's results", async () => {
  const { tools } = await client.listTools();
  assert(tools.length === 17, `got ${tools.length} tools`);
  revisionResult("tools/list", "public");
  await client.listResources();
  revisionResult("resources/list", "public");
  await client.listResourceTemplates();
  revisionResult("resources/templates/list", "public");
});

let assetId;
await step("tools/call with Mcp-Name, and its rate window", async () => {
  const result = await client.callTool({ name: "list_assets", arguments: { limit: 1, status: "completed" } });
  assert(!result.isError, JSON.stringify(result.structuredContent));
  assetId = result.structuredContent.data[0].id;
  const { x } = revisionResult("tools/call");
  assert(x.name === "list_assets", `Mcp-Name ${x.name}`);
  assert(x.headers.get("authorization"), "no bearer");
});

await step("resources/read of an asset and of the catalog: the revision's results", async () => {
  const file = await client.readResource({ uri: `mediamock://assets/${assetId}` });
  assert(file.contents[0].mimeType === "image/png", `mime type ${file.contents[0].mimeType}`);
  const { x } = revisionResult("resources/read", "private");
  assert(x.name === `mediamock://assets/${assetId}`, `Mcp-Name ${x.name}`);
  const catalog = await client.readResource({ uri: "mediamock://models" });
  assert(JSON.parse(catalog.contents[0].text).object === "model_catalog", "not the catalog");
  revisionResult("resources/read", "public");
});

await step("a name an HTTP header cannot carry goes in Base64 and is decoded", async () => {
  const uri = "mediamock://assets/\u00e9t\u00e9";
  let err;
  await client.readResource({ uri }).catch((e) => (err = e));
  const x = exchanges.at(-1);
  assert(x.name?.startsWith("=?base64?"), `the client sent Mcp-Name ${x.name}`);
  assert(x.status === 200, `status ${x.status}: ${x.body}`);
  assert(JSON.parse(x.body).error?.code === -32602, `not the unknown resource's error: ${x.body}`);
  assert(err, "no error for an unknown resource");
});

// raw posts one message with the revision's headers, some replaced.
async function raw(method, params, headers) {
  const h = new Headers({
    Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream",
    "Mcp-Protocol-Version": revision, "Mcp-Method": method,
  });
  for (const [k, v] of Object.entries(headers)) v === null ? h.delete(k) : h.set(k, v);
  const meta = { "io.modelcontextprotocol/protocolVersion": h.get("mcp-protocol-version") ?? revision, "io.modelcontextprotocol/clientCapabilities": {} };
  const res = await fetch(url, { method: "POST", headers: h, body: JSON.stringify({ jsonrpc: "2.0", id: 5, method, params: { ...params, _meta: meta } }) });
  return { status: res.status, msg: await res.json() };
}

await step("a missing or mismatched standard header: 400 with -32020, on every method", async () => {
  const read = { uri: "mediamock://models" };
  const cases = [
    ["tools/list", {}, { "Mcp-Method": null }],
    ["tools/list", {}, { "Mcp-Method": "resources/list" }],
    ["server/discover", {}, { "Mcp-Method": null }],
    ["resources/read", read, {}],
    ["resources/read", read, { "Mcp-Name": "mediamock://assets/1" }],
    ["tools/call", { name: "get_account", arguments: {} }, { "Mcp-Name": "list_models" }],
  ];
  for (const [method, params, headers] of cases) {
    const { status, msg } = await raw(method, params, headers);
    assert(status === 400 && msg.error?.code === -32020 && msg.id === 5, `${method} ${JSON.stringify(headers)}: ${status} ${JSON.stringify(msg)}`);
  }
  const { status, msg } = await raw("resources/read", read, { "Mcp-Name": `=?base64?${Buffer.from(read.uri).toString("base64")}?=` });
  assert(status === 200 && msg.result?.resultType === "complete", `the Base64 form: ${status} ${JSON.stringify(msg).slice(0, 200)}`);
});

await step("a version the server does not speak, of any date: -32022 with the supported list", async () => {
  for (const version of ["1900-01-01", "2025-01-01", "2099-12-31"]) {
    const { status, msg } = await raw("tools/list", {}, { "Mcp-Protocol-Version": version });
    assert(status === 400 && msg.error?.code === -32022, `${version}: ${status} ${JSON.stringify(msg)}`);
    assert(msg.error.data?.supported?.includes(revision), `${version}: supported ${JSON.stringify(msg.error.data)}`);
  }
});

await client.close();
done("mcp-ts modern");
