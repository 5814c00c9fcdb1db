package controlapi

import (
	"bytes"
	"encoding/json"
	"time"
)

// JournalEntry is one recorded request, as GET /_mock/journal shows it.
type JournalEntry struct {
	// ID is the request id, the X-Request-Id header of the answer.
	ID string `json:"id"`
	// Seq numbers the entries of a journal from 1, in the order they were
	// recorded; it goes on after the journal is cleared. A wait for a
	// request takes the last number seen (after).
	Seq int64 `json:"seq"`
	// Time is the wall-clock time the request arrived, in UTC.
	Time time.Time `json:"time"`
	// SimTime is the simulated time the request was answered, in UTC.
	SimTime time.Time `json:"sim_time"`
	// Front is rest or mcp.
	Front string `json:"front,omitempty"`
	// Method is the HTTP method; "" for an MCP call over stdio.
	Method string `json:"method"`
	// Path is the HTTP path; "" for an MCP call over stdio.
	Path string `json:"path"`
	// Query is the raw query of the request's URL.
	Query string `json:"query,omitempty"`
	// MCPMethod is the JSON-RPC method of an MCP message (tools/call), or
	// the methods of a batch, separated by commas.
	MCPMethod string `json:"mcp_method,omitempty"`
	// Operation is the operationId of openapi.json the request called,
	// through REST or as an MCP tool.
	Operation string `json:"operation,omitempty"`
	// Status is the HTTP status; for an MCP tool call, the status the
	// operation answered, as REST would have.
	Status int `json:"status"`
	// ErrorCode is the code of the error object the request answered.
	ErrorCode string `json:"error_code,omitempty"`
	// WorkspaceID is the workspace the request was made for; 0 when none
	// was identified.
	WorkspaceID uint64 `json:"workspace_id,omitempty"`
	// SandboxID is the sandbox the workspace is, if it is one.
	SandboxID string `json:"sandbox_id,omitempty"`
	// DurationMS is how long the answer took, in milliseconds of the wall
	// clock.
	DurationMS float64 `json:"duration_ms"`
	// InjectedLatencyMS is the latency a fault added.
	InjectedLatencyMS int64 `json:"injected_latency_ms,omitempty"`
	// RequestContentType is the request's Content-Type.
	RequestContentType string `json:"request_content_type,omitempty"`
	// Traceparent is the request's W3C traceparent header (Trace
	// Context), when it sent one that is well-formed; an ill-formed one is
	// not kept.
	Traceparent string `json:"traceparent,omitempty"`
	// RequestBytes counts the whole request body.
	RequestBytes int64 `json:"request_bytes"`
	// RequestBody is the request body, up to the journal's cap.
	RequestBody string `json:"request_body,omitempty"`
	// RequestBodyTruncated says the cap cut RequestBody.
	RequestBodyTruncated bool `json:"request_body_truncated,omitempty"`
	// ResponseBytes counts the whole response body.
	ResponseBytes int64 `json:"response_bytes"`
	// ResponseBody is the response body, up to the journal's cap.
	ResponseBody string `json:"response_body,omitempty"`
	// ResponseBodyTruncated says the cap cut ResponseBody.
	ResponseBodyTruncated bool `json:"response_body_truncated,omitempty"`
	// Fault names the injected faults the exchange met, in the order it
	// met them ("latency,truncate").
	Fault string `json:"fault,omitempty"`
	// FaultRule names the rules that struck (flt_3), "header" for a
	// Mock-Fault header or "server" for the server's evolve mode, in the
	// order of Fault.
	FaultRule string `json:"fault_rule,omitempty"`
	// OutsideContract says why the answer is outside the contract: a
	// status fault that rehearses drift (drift: true) forced a status, code
	// or body the document does not allow ("getAccount does not declare
	// 418"). The client report names these answers (outside-contract).
	OutsideContract string `json:"outside_contract,omitempty"`
	// AnswerCut says a fault that breaks an answer struck it (reset,
	// truncate, empty_reply, garbage_then_close, file_truncate): the
	// client never got the answer whole. The bodies are what the server
	// wrote.
	AnswerCut bool `json:"answer_cut,omitempty"`
	// Evolved names what an evolve fault added to the answer: fields by
	// path ($.assets[0].region), enum values by path and values
	// ($.status: moderating (was processing)), headers ("header
	// X-Service-Region"), and "keys reordered".
	Evolved []string `json:"evolved,omitempty"`
}

// timeLayout is the control API's timestamp: ISO 8601 to the second, with
// a UTC offset.
const timeLayout = "2006-01-02T15:04:05-07:00"

// MarshalJSON writes the entry as control.json describes it, its times
// like every timestamp of the API: to the second, in UTC, with an offset
// (2025-06-01T12:00:00+00:00). Decoding takes them back as time.Time does.
func (e JournalEntry) MarshalJSON() ([]byte, error) {
	type fields JournalEntry // the same fields, without this method
	// The id, number and times come first, as in the entry; the outer fields
	// shadow the embedded ones of the same names.
	v := struct {
		ID      string `json:"id"`
		Seq     int64  `json:"seq"`
		Time    string `json:"time"`
		SimTime string `json:"sim_time"`
		fields
	}{e.ID, e.Seq, e.Time.UTC().Format(timeLayout), e.SimTime.UTC().Format(timeLayout), fields(e)}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // bodies are shown as they went
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// JournalFilter selects journal entries, as GET /_mock/journal's query
// does; zero fields match everything.
type JournalFilter struct {
	// Front is rest or mcp.
	Front string
	// ID is the request id.
	ID string
	// Method is the HTTP method, in any case.
	Method string
	// PathPrefix is how the path begins.
	PathPrefix string
	// Status is the status answered.
	Status int
	// Operation is the operationId called.
	Operation string
	// WorkspaceID is the workspace the request was made for.
	WorkspaceID uint64
	// SandboxID is the sandbox the request's workspace is.
	SandboxID string
	// Limit caps how many entries, newest first; 0 means all.
	Limit int
	// After keeps the entries numbered after it (Seq); 0 keeps all.
	After int64
	// Before keeps the entries numbered before it (Seq): the page after
	// one whose oldest entry was Before; 0 keeps all.
	Before int64
}
