package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// mcpListBody is the list page as an MCP tools/call in the sessionless
// protocol revision: one POST, one JSON answer.
const mcpListBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"compare","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

var mcpHeaders = []string{"Accept: application/json, text/event-stream",
	"Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: list_assets"}

// mcpSessionBody is the list page as a tools/call inside a session.
const mcpSessionBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20}}}`

// mcpSession opens an MCP session (2025-11-25), as most clients do today,
// and returns its id.
func mcpSession(client *http.Client, url string) (string, error) {
	send := func(id, body string) (*http.Response, error) {
		req, err := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	resp, err := send("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"compare","version":"1"}}}`)
	if err != nil {
		return "", err
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		return "", fmt.Errorf("initialize answered %d without a session", resp.StatusCode)
	}
	_, err = send(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id, err
}
