package report

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/fault"
)

// What the report reads of a journal entry: the call it was, the job it
// created, what it charged, the Retry-After it was told, whether its answer
// was lost, whether it counts against the rate window.

// call is what an entry called: its operation, the job id it names and
// its wait_seconds, from the path and query (REST) or the tool call's
// arguments (MCP).
type call struct {
	op   string
	id   uint64
	wait bool
}

func callOf(e *controlapi.JournalEntry) call {
	c := call{op: e.Operation}
	if e.Front == "mcp" {
		var msg struct {
			Params struct {
				Arguments struct {
					ID          json.Number `json:"id"`
					WaitSeconds json.Number `json:"wait_seconds"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(e.RequestBody), &msg) == nil {
			id, _ := strconv.ParseUint(msg.Params.Arguments.ID.String(), 10, 64)
			w, _ := strconv.ParseFloat(msg.Params.Arguments.WaitSeconds.String(), 64)
			c.id, c.wait = id, w > 0
		}
		return c
	}
	if i := strings.LastIndexByte(e.Path, '/'); i >= 0 {
		c.id, _ = strconv.ParseUint(e.Path[i+1:], 10, 64)
	}
	for part := range strings.SplitSeq(e.Query, "&") {
		if v, ok := strings.CutPrefix(part, "wait_seconds="); ok {
			w, _ := strconv.ParseFloat(v, 64)
			c.wait = c.wait || w > 0
		}
	}
	if e.Method == "POST" && strings.Contains(e.RequestBody, `"wait_seconds"`) {
		var body struct {
			WaitSeconds float64 `json:"wait_seconds"`
		}
		if json.Unmarshal([]byte(e.RequestBody), &body) == nil {
			c.wait = body.WaitSeconds > 0
		}
	}
	return c
}

// created is the id a creation answered with: the first asset's of a
// generation, the creation's of an Encore creation; 0 when the answer
// does not say (an error, a body cut by the journal's cap).
func created(e *controlapi.JournalEntry) uint64 {
	body := []byte(e.ResponseBody)
	if e.Front == "mcp" {
		var msg struct {
			Result struct {
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		if json.Unmarshal(body, &msg) != nil {
			return 0
		}
		body = msg.Result.StructuredContent
	}
	var v struct {
		ID     uint64 `json:"id"`
		Assets []struct {
			ID uint64 `json:"id"`
		} `json:"assets"`
	}
	if json.Unmarshal(body, &v) != nil {
		return 0
	}
	if len(v.Assets) > 0 {
		return v.Assets[0].ID
	}
	return v.ID
}

// charged is a creation's credits_charged, 0 when its answer does not say.
func charged(e *controlapi.JournalEntry) int64 {
	i := strings.Index(e.ResponseBody, `"credits_charged":`)
	if i < 0 {
		return 0
	}
	rest := e.ResponseBody[i+len(`"credits_charged":`):]
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, _ := strconv.ParseInt(rest[:end], 10, 64)
	return n
}

// retryAfter is the seconds a 429 said to wait (its details'
// retry_after_seconds), at least 1.
func retryAfter(e *controlapi.JournalEntry) time.Duration {
	i := strings.Index(e.ResponseBody, `"retry_after_seconds":`)
	if i < 0 {
		return time.Second
	}
	rest := e.ResponseBody[i+len(`"retry_after_seconds":`):]
	end := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(rest)
	}
	secs, err := strconv.ParseFloat(rest[:end], 64)
	if err != nil || secs < 1 {
		secs = 1
	}
	return time.Duration(secs * float64(time.Second))
}

// lost reports whether an exchange's answer never reached the client
// whole: a fault whose kind breaks the answer struck it.
func lost(e *controlapi.JournalEntry) bool {
	for f := range strings.SplitSeq(e.Fault, ",") {
		if fault.Breaks(f) {
			return true
		}
	}
	return false
}

// counts reports whether a request counts against the rate window: the
// service's API, and MCP's tool calls and reads (not its protocol
// messages); files do not.
func counts(e *controlapi.JournalEntry) bool {
	if e.Front == "mcp" {
		return strings.Contains(e.MCPMethod, "tools/call") || strings.Contains(e.MCPMethod, "resources/read")
	}
	return !strings.HasPrefix(e.Path, "/files/")
}

var creations = map[string]string{"createGeneration": "generation", "createEncoreCreation": "encore"}
var reads = map[string]string{"getGeneration": "generation", "getAsset": "generation", "getEncoreCreation": "encore"}
