// Checks the mock's authorization server with the official TypeScript
// SDK's OAuth client, as an agent that speaks OAuth uses it, without a TTY
// or a browser: on /mcp's 401 the SDK discovers the authorization server
// (RFC 9728, RFC 8414), registers (RFC 7591) and sends the user to the
// authorization page with PKCE; the server was started with
// --oauth-approve, so the "user agent" here is one fetch that reads the
// code from the redirect. Then the token lists the tools and calls one, is
// refused by REST (the SDK asked for a token for /mcp alone: RFC 8707, and
// the MCP authorization spec's audience rule), refreshes (the old access
// token is superseded), sees a reused refresh token end its line (RFC 9700),
// authorizes again, and stops working once revoked.
//
//   MCP_URL=http://127.0.0.1:8080/mcp node oauth.mjs
//
// It prints one line per step and a last line "mcp-ts oauth: N passed, M
// failed"; it exits non-zero when a step fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError, refreshAuthorization, discoverAuthorizationServerMetadata } from "@modelcontextprotocol/sdk/client/auth.js";
import { step, assert, done } from "./steps.mjs";

const url = new URL(process.env.MCP_URL ?? "http://127.0.0.1:8080/mcp");
const root = url.origin;

// provider keeps what the SDK's OAuth flow saves, in memory, and plays the
// user agent: it follows the authorization URL once and keeps the code.
class Provider {
  constructor() {
    this.code = undefined;
    this.saved = {};
  }
  get redirectUrl() {
    return "http://127.0.0.1:33418/callback";
  }
  get clientMetadata() {
    return {
      client_name: "mediamock oauth check",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(info) {
    this.saved.client = info;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  saveCodeVerifier(v) {
    this.saved.verifier = v;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
  async redirectToAuthorization(authorizationUrl) {
    this.authorizationUrl = authorizationUrl;
    const res = await fetch(authorizationUrl, { redirect: "manual" });
    assert(res.status === 302, `the authorization endpoint answered ${res.status}: ${await res.text()}`);
    const back = new URL(res.headers.get("location"));
    this.code = back.searchParams.get("code");
    assert(this.code, `no code in the redirect ${back}`);
  }
}

const provider = new Provider();

async function connected() {
  const client = new Client({ name: "mediamock-oauth-check", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return client;
}

async function rest(token) {
  return fetch(`${root}/api/v1/account`, { headers: { Authorization: `Bearer ${token}` } });
}

await step("discovery, registration and authorization with PKCE, driven by the SDK", async () => {
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const client = new Client({ name: "mediamock-oauth-check", version: "1.0.0" });
  let unauthorized = false;
  try {
    await client.connect(transport);
  } catch (err) {
    unauthorized = err instanceof UnauthorizedError;
    if (!unauthorized) throw err;
  }
  assert(unauthorized, "the first connection should need authorization");
  assert(provider.saved.client?.client_id?.startsWith("mcl_"), `registered: ${JSON.stringify(provider.saved.client)}`);
  const auth = new URL(provider.authorizationUrl);
  assert(auth.searchParams.get("code_challenge_method") === "S256", `PKCE: ${auth}`);
  assert(auth.searchParams.get("resource") === url.href, `resource indicator: ${auth.searchParams.get("resource")}`);
  await transport.finishAuth(provider.code);
  assert(provider.saved.tokens?.access_token?.startsWith("oat_"), `tokens: ${JSON.stringify(provider.saved.tokens)}`);
  assert(provider.saved.tokens.refresh_token, "a refresh token");
});

await step("the token lists the tools and calls one", async () => {
  const client = await connected();
  const tools = await client.listTools();
  assert(tools.tools.length === 17, `${tools.tools.length} tools`);
  const res = await client.callTool({ name: "get_account", arguments: {} });
  assert(!res.isError, JSON.stringify(res));
  assert(res.structuredContent.token_type === "oauth", JSON.stringify(res.structuredContent));
  await client.close();
});

await step("the token, issued for /mcp alone, is refused by REST", async () => {
  const res = await rest(provider.saved.tokens.access_token);
  assert(res.status === 401, `GET /account: ${res.status}`);
  assert((res.headers.get("www-authenticate") ?? "").includes('error="invalid_token"'), res.headers.get("www-authenticate"));
  const body = await res.json();
  assert(body.error?.details?.resource === "/api/v1", JSON.stringify(body));
});

// ping posts a ping to /mcp with a bearer token and returns the status.
async function ping(token) {
  const res = await fetch(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  return res.status;
}

let old;
await step("a refresh gives new tokens and supersedes the old access token", async () => {
  const metadata = await discoverAuthorizationServerMetadata(root);
  old = provider.saved.tokens;
  const fresh = await refreshAuthorization(root, {
    metadata,
    clientInformation: provider.saved.client,
    refreshToken: old.refresh_token,
    resource: url,
  });
  assert(fresh.access_token !== old.access_token && fresh.refresh_token !== old.refresh_token, JSON.stringify(fresh));
  provider.saveTokens(fresh);
  const client = await connected();
  await client.callTool({ name: "list_models", arguments: {} });
  await client.close();
  const status = await ping(old.access_token);
  assert(status === 401, `/mcp with the superseded access token: ${status}`);
});

await step("a used refresh token presented again is refused and ends its line", async () => {
  const metadata = await discoverAuthorizationServerMetadata(root);
  let refused = false;
  try {
    await refreshAuthorization(root, { metadata, clientInformation: provider.saved.client, refreshToken: old.refresh_token, resource: url });
  } catch (err) {
    refused = String(err).includes("invalid_grant") || err?.constructor?.name === "InvalidGrantError";
  }
  assert(refused, "the used refresh token should be refused with invalid_grant");
  const status = await ping(provider.saved.tokens.access_token);
  assert(status === 401, `/mcp with the line's live access token after the reuse: ${status}`);
});

await step("the client authorizes again", async () => {
  provider.saveTokens(undefined);
  provider.code = undefined;
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const client = new Client({ name: "mediamock-oauth-check", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  assert(provider.code, "a new code");
  await transport.finishAuth(provider.code);
  assert(provider.saved.tokens?.access_token?.startsWith("oat_"), `tokens: ${JSON.stringify(provider.saved.tokens)}`);
  const again = await connected();
  await again.callTool({ name: "get_account", arguments: {} });
  await again.close();
});

await step("a revoked token gets 401 on MCP", async () => {
  const token = provider.saved.tokens.access_token;
  const res = await fetch(`${root}/oauth/revoke`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, client_id: provider.saved.client.client_id }),
  });
  assert(res.status === 200, `revoke: ${res.status}`);
  const mcp = await fetch(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert(mcp.status === 401, `/mcp after revocation: ${mcp.status}`);
  assert((mcp.headers.get("www-authenticate") ?? "").includes("resource_metadata="), mcp.headers.get("www-authenticate"));
});

done("mcp-ts oauth");
