package report

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/journal"
)

// What the report reads of a journal entry: the call it was, the job it
// created, what it charged, the Retry-After it was told, whether it counts
// against the rate window. The bodies are the journal's copies (up to its
// cap), handed with the entry (journal.Parts).

// The classes of the operations the report follows.
var (
	creations = map[string]byte{"createGeneration": generation, "createEncoreCreation": encore}
	reads     = map[string]byte{"getGeneration": generation, "getAsset": generation, "getEncoreCreation": encore}
)

// The kinds of job.
const (
	generation byte = iota
	encore
)

var kindNames = [...]string{generation: "generation", encore: "encore"}

// call is what an entry called: the job id it names and its wait_seconds,
// from the path and query (REST) or the tool call's arguments (MCP).
type call struct {
	id   uint64
	wait bool
}

// callOf reads the call of an entry that creates or reads a job.
func callOf(e *controlapi.JournalEntry, req []byte) call {
	var c call
	if e.Front == "mcp" {
		var msg struct {
			Params struct {
				Arguments struct {
					ID          json.Number `json:"id"`
					WaitSeconds json.Number `json:"wait_seconds"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(req, &msg) == nil {
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
	if e.Method == "POST" && bytes.Contains(req, []byte(`"wait_seconds"`)) {
		var body struct {
			WaitSeconds float64 `json:"wait_seconds"`
		}
		if json.Unmarshal(req, &body) == nil {
			c.wait = body.WaitSeconds > 0
		}
	}
	return c
}

// structured is an answer's JSON: an MCP tool call's structured content,
// a REST answer's body.
func structured(e *controlapi.JournalEntry, body []byte) []byte {
	if e.Front != "mcp" {
		return body
	}
	var msg struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil
	}
	return msg.Result.StructuredContent
}

// created is the id a creation answered with: the first asset's of a
// generation, the creation's of an Encore creation; 0 when the answer
// does not say (an error, a body cut by the journal's cap).
func created(e *controlapi.JournalEntry, res []byte) uint64 {
	// A generation as the API writes it names its first asset's id first:
	// read without decoding the answer (an --evolve server reorders
	// members, and MCP wraps it: decoded then).
	if e.Front != "mcp" && bytes.HasPrefix(res, []byte(`{"object":"generation","status":"`)) {
		if i := bytes.Index(res, []byte(`","assets":[{"id":`)); i > 0 {
			rest := res[i+len(`","assets":[{"id":`):]
			if end := bytes.IndexByte(rest, ','); end > 0 {
				if id, err := strconv.ParseUint(string(rest[:end]), 10, 64); err == nil {
					return id
				}
			}
		}
	}
	var v struct {
		ID     uint64 `json:"id"`
		Assets []struct {
			ID uint64 `json:"id"`
		} `json:"assets"`
	}
	if json.Unmarshal(structured(e, res), &v) != nil {
		return 0
	}
	if len(v.Assets) > 0 {
		return v.Assets[0].ID
	}
	return v.ID
}

// number is the whole number after key in body, 0 when there is none.
func number(body []byte, key string) float64 {
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return 0
	}
	rest := body[i+len(key):]
	end := bytes.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(rest)
	}
	n, _ := strconv.ParseFloat(string(rest[:end]), 64)
	return n
}

// charged is a creation's credits_charged, 0 when its answer does not say.
func charged(res []byte) int64 { return int64(number(res, `"credits_charged":`)) }

// retryAfter is the wait an answer asked for: its Retry-After header, or
// its error's retry_after_seconds (an MCP tool call has no headers); 0
// when it gives none.
func retryAfter(res []byte, headers []byte) time.Duration {
	secs := 0.0
	if v := journal.Headers(headers).Get("Retry-After"); v != "" {
		secs, _ = strconv.ParseFloat(v, 64)
	} else {
		secs = number(res, `"retry_after_seconds":`)
	}
	return time.Duration(secs * float64(time.Second))
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

// lists reports whether a page of the library lists an asset: its id is
// a value of an "id" key of the page.
func lists(page []byte, id uint64) bool {
	var key [32]byte
	k := strconv.AppendUint(append(key[:0], `"id":`...), id, 10)
	for rest := page; ; {
		i := bytes.Index(rest, k)
		if i < 0 {
			return false
		}
		rest = rest[i+len(k):]
		if len(rest) == 0 || rest[0] == ',' || rest[0] == '}' {
			return true
		}
	}
}
