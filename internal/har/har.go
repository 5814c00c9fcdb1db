// Package har writes a journal as an HTTP Archive, HAR 1.2 (the format
// of every browser's DevTools, Charles, Insomnia, Postman, k6 and
// MockServer): each exchange with its request and answer, their headers
// and bodies as the journal keeps them (marked when its cap cut them),
// its timings, and the mock's annotations in fields whose names begin
// with an underscore, as HAR allows: the journal's id and seq, the
// operation, the workspace and sandbox, the simulated time, the faults
// met and whether one cut the answer, the client report's findings that
// cite it.
//
// Write streams the log: it reads the journal a chunk at a time, without
// holding it while it writes, so an export of any size costs a chunk of
// memory.
package har

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/version"
)

// ContentType is the media type of a HAR file as the control API serves
// it.
const ContentType = "application/har+json"

// chunk is how many entries Write reads from the journal at a time.
const chunk = 64

// Options say how a journal is written.
type Options struct {
	// Base is the server's root address as the reader reaches it
	// (http://127.0.0.1:8080): each request's URL is Base, its path and
	// its query.
	Base string
	// Scope names what the log holds ("the server", "sandbox sbx_..."):
	// the log's _scope.
	Scope string
	// Filter selects the entries; Limit keeps the newest Limit of them (0:
	// all the journal holds).
	Filter journal.Filter
	Limit  int
	// Findings, when set, gives the ids of the client report's findings
	// that cite each numbered request (an entry's _findings).
	Findings map[int64][]string
	// Hide, when set, shows a credential (an Authorization header's value)
	// as it should be exported.
	Hide func(string) string
}

// Write writes the entries of j that opt selects as a HAR 1.2 log, oldest
// first. An MCP call over stdio, which is no HTTP exchange, is left out.
func Write(w io.Writer, j *journal.Journal, opt Options) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	head, _ := json.Marshal(struct {
		Version string     `json:"version"`
		Creator software   `json:"creator"`
		Pages   []struct{} `json:"pages"`
		Scope   string     `json:"_scope,omitempty"`
	}{"1.2", software{"mediamock", version.String()}, []struct{}{}, opt.Scope})
	bw.WriteString(`{"log":`)
	bw.Write(head[:len(head)-1])
	bw.WriteString(`,"entries":[`)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	first := true
	// What is recorded while the log is written is not in it: the log is
	// the journal as it was asked for.
	after, until := j.Start(opt.Filter, opt.Limit), j.Seq()
	for after < until {
		batch := j.Since(opt.Filter, after, chunk)
		if len(batch) == 0 {
			break
		}
		for i := range batch {
			k := &batch[i]
			if after = k.Seq; after > until {
				break
			}
			if k.Method == "" && k.Path == "" {
				continue // an MCP call over stdio
			}
			if !first {
				bw.WriteByte(',')
			}
			first = false
			if err := enc.Encode(entryOf(k, opt)); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	bw.WriteString("]}}\n")
	return bw.Flush()
}

type software struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type entry struct {
	StartedDateTime string   `json:"startedDateTime"`
	Time            float64  `json:"time"`
	Request         request  `json:"request"`
	Response        response `json:"response"`
	Cache           struct{} `json:"cache"`
	Timings         timings  `json:"timings"`
	// The mock's annotations.
	ID                string   `json:"_id"`
	Seq               int64    `json:"_seq"`
	Front             string   `json:"_front,omitempty"`
	Operation         string   `json:"_operation,omitempty"`
	OperationStatus   int      `json:"_operationStatus,omitempty"`
	MCPMethod         string   `json:"_mcpMethod,omitempty"`
	ErrorCode         string   `json:"_errorCode,omitempty"`
	WorkspaceID       uint64   `json:"_workspaceId,omitempty"`
	SandboxID         string   `json:"_sandboxId,omitempty"`
	SimTime           string   `json:"_simTime"`
	Fault             string   `json:"_fault,omitempty"`
	FaultRule         string   `json:"_faultRule,omitempty"`
	AnswerCut         bool     `json:"_answerCut,omitempty"`
	InjectedLatencyMS int64    `json:"_injectedLatencyMs,omitempty"`
	Evolved           []string `json:"_evolved,omitempty"`
	Traceparent       string   `json:"_traceparent,omitempty"`
	Findings          []string `json:"_findings,omitempty"`
}

type request struct {
	Method      string     `json:"method"`
	URL         string     `json:"url"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []struct{} `json:"cookies"`
	Headers     []pair     `json:"headers"`
	QueryString []pair     `json:"queryString"`
	PostData    *postData  `json:"postData,omitempty"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int64      `json:"bodySize"`
}

type response struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []struct{} `json:"cookies"`
	Headers     []pair     `json:"headers"`
	Content     content    `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int64      `json:"bodySize"`
	// AnswerCut: a fault cut the answer on its way: the client got less
	// than Content holds (bodySize is then -1, not known).
	AnswerCut bool `json:"_answerCut,omitempty"`
}

type pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type postData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	// Encoding is base64 when the body is not text (HAR's postData has no
	// encoding of its own: content's is borrowed).
	Encoding string `json:"_encoding,omitempty"`
	// Truncated: the journal kept the first bytes only (its cap).
	Truncated bool `json:"_truncated,omitempty"`
}

type content struct {
	Size      int64  `json:"size"`
	MimeType  string `json:"mimeType"`
	Text      string `json:"text"`
	Encoding  string `json:"encoding,omitempty"`
	Truncated bool   `json:"_truncated,omitempty"`
}

type timings struct {
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// entryOf is one exchange as HAR says it.
func entryOf(k *journal.Kept, opt Options) entry {
	e := entry{StartedDateTime: k.Time.UTC().Format(time.RFC3339Nano), Time: k.DurationMS,
		Timings: timings{Wait: k.DurationMS},
		ID:      k.ID, Seq: k.Seq, Front: k.Front, Operation: k.Operation, MCPMethod: k.MCPMethod, ErrorCode: k.ErrorCode,
		WorkspaceID: k.WorkspaceID, SandboxID: k.SandboxID, SimTime: k.SimTime.UTC().Format(time.RFC3339Nano),
		Fault: k.Fault, FaultRule: k.FaultRule, AnswerCut: k.AnswerCut, InjectedLatencyMS: k.InjectedLatencyMS,
		Evolved: k.Evolved, Traceparent: k.Traceparent, Findings: opt.Findings[k.Seq]}
	u := strings.TrimRight(opt.Base, "/") + k.Path
	if k.Query != "" {
		u += "?" + k.Query
	}
	e.Request = request{Method: k.Method, URL: u, HTTPVersion: "HTTP/1.1", Cookies: []struct{}{},
		Headers: headers(k.RequestHeaders, opt.Hide), QueryString: query(k.Query), HeadersSize: -1, BodySize: k.RequestBytes}
	if k.RequestBytes > 0 || k.RequestBody != "" {
		text, enc := body(k.RequestBody)
		e.Request.PostData = &postData{MimeType: k.RequestContentType, Text: text, Encoding: enc, Truncated: k.RequestBodyTruncated}
	}
	status := k.Status
	if k.Front == "mcp" && k.Operation != "" {
		// A tool call: the entry's status is the operation's, the HTTP
		// exchange's is 200.
		status, e.OperationStatus = http.StatusOK, k.Status
	}
	text, enc := body(k.ResponseBody)
	e.Response = response{Status: status, StatusText: http.StatusText(status), HTTPVersion: "HTTP/1.1", Cookies: []struct{}{},
		Headers: headers(k.ResponseHeaders, nil), RedirectURL: k.ResponseHeaders.Get("Location"), HeadersSize: -1,
		BodySize: k.ResponseBytes, AnswerCut: k.AnswerCut,
		Content: content{Size: k.ResponseBytes, MimeType: k.ResponseHeaders.Get("Content-Type"), Text: text, Encoding: enc,
			Truncated: k.ResponseBodyTruncated}}
	if e.Response.Content.MimeType == "" {
		e.Response.Content.MimeType = "application/octet-stream"
	}
	if k.AnswerCut {
		e.Response.BodySize = -1
	}
	return e
}

// headers are the lines of a side's headers, each credential as hide
// shows it.
func headers(h journal.Headers, hide func(string) string) []pair {
	out := []pair{}
	for name, value := range h.All() {
		if hide != nil && (name == "Authorization" || name == "Proxy-Authorization") {
			value = hide(value)
		}
		out = append(out, pair{name, value})
	}
	return out
}

// query is a raw query's parameters, in their order, unescaped.
func query(raw string) []pair {
	out := []pair{}
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		name, value, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		out = append(out, pair{name, value})
	}
	return out
}

// body is a body as HAR's text: as it is when it is UTF-8 text, else in
// base64.
func body(b string) (text, encoding string) {
	if utf8.ValidString(b) && !strings.ContainsRune(b, 0) {
		return b, ""
	}
	return base64.StdEncoding.EncodeToString([]byte(b)), "base64"
}
