// Checks the mock's control MCP server (/_mock/mcp) with the official
// TypeScript SDK, as an agent that steers the simulation from its own
// session: the current client (@modelcontextprotocol/client 2.x) pinned to
// the sessionless revision 2026-07-28, then the handshake-era client
// (@modelcontextprotocol/sdk 1.x, with a session). Each runs the scripted
// rehearsal: create a sandbox, fail its next video, generate one on the
// service's /mcp with the sandbox's key, run the sandbox's due events, see
// the job fail and its credits refunded in the ledger, find the request in
// the journal, delete the sandbox.
//
//   MCP_URL=http://127.0.0.1:8080/mcp node control.mjs
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { step, assert, done } from "./steps.mjs";

const service = new URL(process.env.MCP_URL ?? "http://127.0.0.1:8080/mcp");
const controlURL = new URL("/_mock/mcp", service);

// call calls a tool and returns its structured content; a tool error
// throws with the control API's error object.
async function call(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert(!res.isError, `${name}: ${res.content?.[0]?.text}`);
  return res.structuredContent;
}

async function rehearse(ctl, label) {
  let sb;
  await step(`${label}: create_sandbox, fail_next a video`, async () => {
    sb = await call(ctl, "create_sandbox", { name: `ts ${label}` });
    assert(sb.id?.startsWith("sbx_") && sb.api_key && sb.mcp_url, JSON.stringify(sb));
    const faults = await call(ctl, "fail_next", { count: 1, modality: "video", sandbox: sb.id });
    assert(faults.fail_next?.length === 1, JSON.stringify(faults));
  });
  let assetId;
  await step(`${label}: the service's /mcp with the sandbox's key creates the video`, async () => {
    const svc = new Client({ name: "client-under-test", version: "1.0.0" });
    await svc.connect(new StreamableHTTPClientTransport(new URL(sb.mcp_url), {
      requestInit: { headers: { Authorization: `Bearer ${sb.api_key}` } },
    }));
    const gen = await call(svc, "create_generation", { modality: "video", model_id: "veo-3-fast", prompt: "surf at dawn", duration: 4 });
    assetId = gen.assets[0].id;
    await call(ctl, "run_sandbox", { sandbox: sb.id });
    const got = await call(svc, "get_generation", { id: assetId });
    assert(got.status === "failed", `status ${got.status}`);
    await svc.close();
  });
  await step(`${label}: the ledger refunds it, the journal has it`, async () => {
    const ledger = await call(ctl, "get_ledger", { id: sb.workspace_id });
    assert(JSON.stringify(ledger).includes("refund"), JSON.stringify(ledger).slice(0, 400));
    const journal = await call(ctl, "get_journal", { sandbox: sb.id, operation: "createGeneration" });
    assert(journal.entries.length === 1 && journal.entries[0].status === 201, JSON.stringify(journal).slice(0, 400));
    const seen = await call(ctl, "wait_journal", { sandbox: sb.id, operation: "getGeneration", after: 0, timeout: 1 });
    assert(seen.operation === "getGeneration", JSON.stringify(seen));
  });
  await step(`${label}: resources and prompts`, async () => {
    const { resources } = await ctl.listResources();
    assert(resources.some((r) => r.uri === "mediamock-control://journal"), JSON.stringify(resources));
    const read = await ctl.readResource({ uri: "mediamock-control://journal" });
    assert(JSON.parse(read.contents[0].text).entries.length > 0, "an empty journal");
    const { prompts } = await ctl.listPrompts();
    assert(prompts.length === 3, `${prompts.length} prompts`);
    const p = await ctl.getPrompt({ name: "fail_next_video_and_check_refund", arguments: { sandbox: sb.id } });
    assert(p.messages[0].content.text.includes("run_sandbox"), p.messages[0].content.text);
  });
  await step(`${label}: delete_sandbox; then it is not found`, async () => {
    await call(ctl, "delete_sandbox", { sandbox: sb.id });
    const gone = await ctl.callTool({ name: "get_sandbox", arguments: { sandbox: sb.id } });
    assert(gone.isError, JSON.stringify(gone));
    const unknown = await ctl.callTool({ name: "get_sandbox", arguments: {} }).catch((e) => ({ isError: true, e }));
    assert(unknown.isError, "a missing argument is an error");
  });
}

const modern = new ModernClient({ name: "mediamock-control-check", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
await step("2026-07-28: connect to /_mock/mcp, no session; tools/list", async () => {
  const transport = new ModernTransport(controlURL);
  await modern.connect(transport);
  assert(!transport.sessionId, `a session id ${transport.sessionId}`);
  const { tools } = await modern.listTools();
  assert(tools.some((t) => t.name === "create_sandbox") && tools.some((t) => t.name === "wait_journal"), `${tools.length} tools`);
  assert(!tools.some((t) => t.name === "create_generation"), "a service tool on the control server");
});
await rehearse(modern, "2026-07-28");
await modern.close();

const legacy = new Client({ name: "mediamock-control-check", version: "1.0.0" });
await step("2025-11-25: initialize a session at /_mock/mcp", async () => {
  const transport = new StreamableHTTPClientTransport(controlURL);
  await legacy.connect(transport);
  assert(transport.sessionId?.startsWith("mcc_"), `session ${transport.sessionId}`);
});
await rehearse(legacy, "sessions");
await legacy.close();

done("control");
