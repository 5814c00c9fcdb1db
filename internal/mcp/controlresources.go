package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/wire"
)

// controlResources are what the control MCP server offers to read: the
// journal, the coverage and the faults of the caller's scope (a sandbox's
// own with its control token), each the answer of a control API read; in
// the sessionless revision each is read with cacheScope "private".
var controlResources = []struct {
	res  mcpserver.Resource
	op   string // the control plane's operation
	path string // its path under the control API's prefix
}{
	{mcpserver.Resource{URI: "mediamock-control://journal", Name: "journal", Title: "Journal", MIMEType: "application/json",
		Description: "The last requests the service's fronts answered, oldest first, of the caller's scope (GET /_mock/journal)."}, "getJournal", "/journal"},
	{mcpserver.Resource{URI: "mediamock-control://coverage", Name: "coverage", Title: "Coverage", MIMEType: "application/json",
		Description: "Which operations, statuses and failure paths the caller's scope has exercised (GET /_mock/coverage)."}, "getCoverage", "/coverage"},
	{mcpserver.Resource{URI: "mediamock-control://faults", Name: "faults", Title: "Faults", MIMEType: "application/json",
		Description: "The fault rules of the caller's scope, with how many requests each matched and struck (GET /_mock/faults)."}, "getFaults", "/faults"},
}

func (c *Control) addResources() {
	prefix := strings.TrimSuffix(ControlPath, "/mcp")
	for _, cr := range controlResources {
		res, op, path := cr.res, cr.op, prefix+cr.path
		c.server.AddResource(res, func(ctx context.Context, uri string) (*mcpserver.ReadResult, error) {
			status, _, data := c.serve(ctx, http.MethodGet, path, &controlplane.Call{Op: op}, controlCallerFrom(ctx))
			if status < 200 || status > 299 {
				return nil, controlReadError(status, data)
			}
			// What is read depends on the caller's credential (a
			// sandbox's token reads its own): no shared cache.
			return &mcpserver.ReadResult{CacheScope: "private", Contents: []mcpserver.ResourceContents{{URI: res.URI, MIMEType: "application/json", Text: string(data)}}}, nil
		})
	}
}

// controlReadError is a refused read as a JSON-RPC error carrying the
// control API's error object.
func controlReadError(status int, data []byte) *mcpserver.Error {
	var body wire.ErrorBody
	msg := http.StatusText(status)
	if json.Unmarshal(data, &body) == nil && body.Error.Code != "" {
		msg = body.Error.Code + ": " + body.Error.Message
	}
	code := int64(mcpserver.CodeInternalError)
	if status < 500 {
		code = codeRefused
	}
	var compact bytes.Buffer
	if json.Compact(&compact, data) != nil {
		compact.Reset()
		compact.WriteString("null")
	}
	return &mcpserver.Error{Code: code, Message: msg, Data: compact.Bytes()}
}

// The prompts stage common rehearsals: each expands to the tool calls
// that make it, in order, for the agent to make.
var controlPrompts = []struct {
	prompt mcpserver.Prompt
	text   func(args map[string]string) string
}{
	{mcpserver.Prompt{Name: "fail_next_video_and_check_refund", Title: "Fail the next video generation and check the refund",
		Description: "Makes the next video job of a sandbox fail, and checks that its credits come back.",
		Arguments:   []mcpserver.PromptArgument{{Name: "sandbox", Description: "The sandbox to use (sbx_...); a new one when left out."}}},
		func(a map[string]string) string {
			return sandboxStep(a) + `2. fail_next {"count": 1, "modality": "video", "sandbox": "<sandbox id>"}: the sandbox's next video job fails (a ` + fault.JobFailure + ` rule; its credits are refunded).
3. With the sandbox's api_key, on the service's MCP server (its mcp_url) or REST API (its base_url): create_generation {"modality": "video", ...}. It answers 201 with a queued job, as ever.
4. run_sandbox {"sandbox": "<sandbox id>"}: the sandbox's due events happen now (the job fails); or advance_clock {"seconds": 600} with the server's control token.
5. get_generation (service) with the job's id: its status is failed, with the rule's error code (provider_error).
6. get_ledger {"id": <workspace_id>}: the debit of the video, then its refund; the balance is back where it was.
7. get_journal {"sandbox": "<sandbox id>", "operation": "createGeneration"}: the request, as the service saw it.
8. delete_sandbox {"sandbox": "<sandbox id>"} when done.`
		}},
	{mcpserver.Prompt{Name: "rehearse_429_storm", Title: "Rehearse a 429 storm",
		Description: "Forces a run of 429 answers (rate limited, with Retry-After) and checks that the client backs off and retries.",
		Arguments: []mcpserver.PromptArgument{{Name: "sandbox", Description: "The sandbox to use (sbx_...); a new one when left out."},
			{Name: "count", Description: "How many requests answer 429 (5 when left out)."}}},
		func(a map[string]string) string {
			count := a["count"]
			if count == "" {
				count = "5"
			}
			return sandboxStep(a) + `2. force_responses {"operation": "*", "status": 429, "count": ` + count + `, "sandbox": "<sandbox id>"}: the sandbox's next ` + count + ` requests answer 429 with Retry-After (or add_fault_rule {"kind": "status", "status": 429, "probability": 0.5, "sandbox": "<sandbox id>"} for a storm that comes and goes).
3. Run the client under test with the sandbox's api_key against its base_url or mcp_url.
4. get_journal {"sandbox": "<sandbox id>", "status": 429}: the requests that met the 429s; then get_journal {"sandbox": "<sandbox id>"} to see the retries after them and how far apart they came.
5. get_coverage {"sandbox": "<sandbox id>"}: failure_paths says whether the client retried after each 429; get_report {"sandbox": "<sandbox id>"} grades it.
6. clear_faults {"sandbox": "<sandbox id>"}, and delete_sandbox {"sandbox": "<sandbox id>"} when done.`
		}},
	{mcpserver.Prompt{Name: "expire_download_links", Title: "Expire download links",
		Description: "Makes the file addresses the service hands out expire, and checks that the client reads the asset again for a fresh one.",
		Arguments: []mcpserver.PromptArgument{{Name: "sandbox", Description: "The sandbox to use (sbx_...); a new one when left out."},
			{Name: "ttl_seconds", Description: "How long an address lives, on the simulated clock (60 when left out)."}}},
		func(a map[string]string) string {
			ttl := a["ttl_seconds"]
			if ttl == "" {
				ttl = "60"
			}
			return sandboxStep(a) + `2. add_fault_rule {"kind": "` + fault.FileExpiry + `", "ttl_seconds": ` + ttl + `, "sandbox": "<sandbox id>"}: file addresses carry expires and signature, and answer 403 file_url_expired ` + ttl + ` s after they were handed out.
3. With the sandbox's api_key: create_generation (wait for it, or run_sandbox {"sandbox": "<sandbox id>"}), then get_asset: its url expires.
4. advance_clock {"seconds": ` + ttl + `} with the server's control token (a sandbox's token cannot move the shared clock), then let the client download the url: 403 file_url_expired.
5. get_journal {"sandbox": "<sandbox id>"}: the client should read the asset again (get_asset) for a fresh url; get_coverage {"sandbox": "<sandbox id>"} counts it under failure_paths (reread).
6. delete_fault_rule {"rule": "<rule id>", "sandbox": "<sandbox id>"}, and delete_sandbox {"sandbox": "<sandbox id>"} when done.`
		}},
}

// sandboxStep is a rehearsal's first step: the sandbox it uses.
func sandboxStep(a map[string]string) string {
	if id := a["sandbox"]; id != "" {
		return "Steps, with the tools of this server (the service's tools named so are on its own MCP server):\n1. get_sandbox {\"sandbox\": \"" + id + "\"}: its api_key, workspace_id, base_url and mcp_url. Below, <sandbox id> is " + id + ".\n"
	}
	return "Steps, with the tools of this server (the service's tools named so are on its own MCP server):\n1. create_sandbox {}: a fresh workspace; keep its id, api_key, workspace_id, base_url and mcp_url.\n"
}

func addPrompts(s *mcpserver.Server) {
	for _, cp := range controlPrompts {
		p, text := cp.prompt, cp.text
		s.AddPrompt(p, func(ctx context.Context, args map[string]string) (*mcpserver.PromptResult, error) {
			return &mcpserver.PromptResult{Description: p.Description,
				Messages: []mcpserver.PromptMessage{{Role: "user", Content: mcpserver.Text(p.Title + ".\n\n" + text(args))}}}, nil
		})
	}
}
