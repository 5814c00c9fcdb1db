// Checks the mock's MCP server with the official TypeScript SDK, as a
// TypeScript agent would use it: Streamable HTTP with a bearer key, the 17
// tools, a long wait with progress notifications, an asset read as a
// resource, and the rate limit it shares with the REST API.
//
//   MCP_URL=http://127.0.0.1:8080/mcp node check.mjs
//
// It prints one line per step and a last line "mcp-ts: N passed, M failed";
// it exits non-zero when a step fails. The server should be fresh (the free
// plan's window unused) and on the virtual clock, so that no minute passes
// in the middle of the rate-limit step.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { step, assert, done } from "./steps.mjs";

const url = new URL(process.env.MCP_URL ?? "http://127.0.0.1:8080/mcp");
const keyAll = process.env.MCP_KEY ?? "mk_test_all_scopes";
const keyFree = process.env.MCP_FREE_KEY ?? "mk_test_free_plan";

// connect opens a session with a key; its fetch keeps the rate-limit
// headers of the last response, by JSON-RPC method.
async function connect(key) {
  const seen = { remaining: {}, last: undefined };
  const fetchWithHeaders = async (input, init) => {
    const res = await fetch(input, init);
    let method;
    try {
      method = JSON.parse(init?.body ?? "{}").method;
    } catch {
      method = undefined;
    }
    const remaining = res.headers.get("x-ratelimit-remaining");
    if (method && remaining !== null) {
      seen.remaining[method] = Number(remaining);
      seen.last = Number(remaining);
    }
    return res;
  };
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: fetchWithHeaders,
  });
  const client = new Client({ name: "mediamock-mcp-ts-check", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, seen };
}

function content(result) {
  assert(result.structuredContent, `no structured content: ${JSON.stringify(result)}`);
  return result.structuredContent;
}

const all = await connect(keyAll).catch((err) => {
  console.log(`FAIL connect to ${url}: ${err?.stack ?? err}`);
  console.log(`mcp-ts: 0 passed, 1 failed`);
  process.exit(1);
});

await step("session id and protocol", async () => {
  assert(all.transport.sessionId, "no Mcp-Session-Id");
  assert(all.transport.protocolVersion, "no negotiated protocol version");
});

let tools = [];
await step("tools/list: 17 tools, one per operation", async () => {
  ({ tools } = await all.client.listTools());
  assert(tools.length === 17, `got ${tools.length} tools: ${tools.map((t) => t.name).join(", ")}`);
  const publish = tools.find((t) => t.name === "create_publication");
  assert(publish?.annotations?.openWorldHint === true, "create_publication is not open-world");
  assert(publish.description.includes("Posts publicly; call only on explicit user intent"), "create_publication does not warn");
  const read = tools.find((t) => t.name === "get_account");
  assert(read?.annotations?.readOnlyHint === true, "get_account is not read-only");
});

let assetId;
await step("create_generation with wait_seconds sends progress, then completes", async () => {
  const progress = [];
  const result = await all.client.callTool(
    { name: "create_generation", arguments: { modality: "image", model_id: "imagen-4", prompt: "a lighthouse at dusk", wait_seconds: 55 } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  assert(!result.isError, `tool error: ${JSON.stringify(result.structuredContent)}`);
  const gen = content(result);
  assert(gen.status === "completed", `status ${gen.status}`);
  assert(gen.credits_charged > 0, "no credits charged");
  assetId = gen.assets[0].id;
  assert(progress.length > 0, "no progress notification");
  assert(progress.at(-1).message === "completed", `last progress ${JSON.stringify(progress.at(-1))}`);
  for (let i = 1; i < progress.length; i++) {
    assert(progress[i].progress > progress[i - 1].progress, `progress does not grow: ${JSON.stringify(progress)}`);
  }
  assert(result.content.some((c) => c.type === "resource_link" && c.uri === `mediamock://assets/${assetId}`), "no resource link");
});

await step("resources/read: the asset's file with its media type", async () => {
  const res = await all.client.readResource({ uri: `mediamock://assets/${assetId}` });
  const file = res.contents[0];
  assert(file.mimeType === "image/png", `mime type ${file.mimeType}`);
  const bytes = Buffer.from(file.blob, "base64");
  assert(bytes.subarray(1, 4).toString() === "PNG", "not a PNG");
});

await step("a bad argument is a tool error with the REST violations", async () => {
  const result = await all.client.callTool({ name: "list_assets", arguments: { limit: 0 } });
  assert(result.isError === true, "not a tool error");
  const err = content(result).error;
  assert(err.code === "validation_failed", `code ${err.code}`);
  assert(err.details.violations.some((v) => v.in === "query" && v.field === "limit"), JSON.stringify(err.details));
});

const free = await connect(keyFree);
await step("tools/list, resources/list and ping do not count against the rate limit", async () => {
  const before = content(await free.client.callTool({ name: "get_account", arguments: {} }));
  const afterCall = free.seen.remaining["tools/call"];
  assert(afterCall === before.rate_limit_per_minute - 1, `X-RateLimit-Remaining ${afterCall} after the first call of a fresh window`);
  await free.client.listTools();
  await free.client.listResources();
  await free.client.ping();
  assert(free.seen.remaining["tools/list"] === afterCall, `tools/list: remaining ${free.seen.remaining["tools/list"]}, want ${afterCall}`);
  assert(free.seen.remaining["ping"] === afterCall, `ping: remaining ${free.seen.remaining["ping"]}, want ${afterCall}`);
  await free.client.callTool({ name: "get_account", arguments: {} });
  assert(free.seen.remaining["tools/call"] === afterCall - 1, `the next call: remaining ${free.seen.remaining["tools/call"]}, want ${afterCall - 1}`);
});

await step("over the free plan's limit a tool call is a rate_limited tool error", async () => {
  let limited;
  for (let i = 0; i < 25 && !limited; i++) {
    const result = await free.client.callTool({ name: "list_models", arguments: {} });
    if (result.isError) limited = result;
  }
  assert(limited, "never rate limited");
  const err = content(limited).error;
  assert(err.code === "rate_limited", `code ${err.code}`);
  assert(err.details.retry_after_seconds >= 1, `retry after ${err.details.retry_after_seconds}`);
  assert(free.seen.remaining["tools/call"] === 0, `remaining ${free.seen.remaining["tools/call"]}`);
  const text = limited.content.find((c) => c.type === "text")?.text ?? "";
  assert(text.includes("rate_limited"), `text ${text}`);
});

await all.client.close();
await free.client.close();
done("mcp-ts");
