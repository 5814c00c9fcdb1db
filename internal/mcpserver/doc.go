// Package mcpserver is the project's MCP server: one implementation of
// every method, for every protocol revision the server speaks (2024-11-05,
// 2025-03-26, 2025-06-18, 2025-11-25 and the sessionless 2026-07-28) and
// both transports, Streamable HTTP and stdio. Both MCP fronts (the
// service's /mcp and the control MCP server) are made of it; it knows no
// front, and the official MCP SDK is a client of its tests only.
//
// A front registers typed handlers, and serves each request with its
// caller in the request's context, where the handlers read it:
//
//	s := mcpserver.New(mcpserver.Options{Implementation: impl, Capabilities: mcpserver.Capabilities{Tools: true}})
//	s.AddTool(mcpserver.Tool{Name: "echo", InputSchema: schema}, func(ctx context.Context, call *mcpserver.ToolCall) *mcpserver.ToolResult {
//		who := callerOf(ctx) // the front's, read-only
//		return &mcpserver.ToolResult{Content: []mcpserver.Content{mcpserver.Text(who + ": " + string(call.Arguments))}}
//	})
//	s.Serve(withCaller(r.Context(), who), w, r) // over HTTP
//	s.ServeStdio(withCaller(ctx, who), os.Stdin, os.Stdout)
//
// What it does:
//
//   - JSON-RPC 2.0: a message or a batch (in the revisions that have
//     batches; refused in the others), read once with go-json-experiment's
//     jsontext tokenizer, in place: the values (a call's arguments) share
//     the body's bytes. What is not JSON is -32700, what is not a message
//     -32600, a method it does not serve -32601, params of another type
//     than the method's -32602, a revision it does not speak -32022.
//   - The handshake (initialize: the revision negotiated, the
//     capabilities), the sessionless revision's server/discover and its
//     headers (Mcp-Protocol-Version, Mcp-Method, Mcp-Name, plain or
//     Base64; -32020 when they say something else than the message),
//     _meta (the server named in every result), resultType, the cache
//     hints (ttlMs, cacheScope).
//   - tools/list, tools/call, resources/list, resources/templates/list,
//     resources/read, prompts/list, prompts/get, ping, logging/setLevel,
//     notifications/cancelled (which cancels the call's context),
//     progress notifications.
//   - Streamable HTTP: a POST answered as one JSON body or as server-sent
//     events; sessions (Mcp-Session-Id) for the handshake-era revisions,
//     bound to the owner that opened them, capped per owner and in all
//     (exactly: a place is reserved under one lock before its session
//     exists), ended by DELETE or by their idle time; a session's GET
//     stream; a dropped event stream resumed with Last-Event-ID from a
//     bounded store of events.
//   - stdio: newline-delimited, every line answered (a line that is not a
//     message, a batch the revision refuses, an unknown method), the
//     session going on; at the end of the input every request read is
//     answered. Bridge relays stdio to a running server's HTTP endpoint.
//
// Its answers are byte for byte those the service's MCP server gave
// before it existed (the golden transcripts of internal/mcp): the field
// orders and escapes of every result, the framing of each kind of request
// (Options says a front's: DirectCalls, DirectReads, ProgressStreams,
// Streamed templates).
package mcpserver
