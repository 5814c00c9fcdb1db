package mediamock

import (
	"io"
	"time"

	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/front"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// The types the Go API takes and returns. Those that the control API also
// shows carry its JSON names, so that a test can decode a control answer
// into them.

// Asset is an asset of the library as the service shows it, with the
// workspace it belongs to and its prompt.
type Asset struct {
	ID          uint64 `json:"id"`
	WorkspaceID uint64 `json:"workspace_id"`
	// Kind is image, video, voice, music, model3d or upload.
	Kind string `json:"kind"`
	// Status is queued, processing, completed or failed.
	Status string `json:"status"`
	// Model is the model id of a generated asset.
	Model     string `json:"model,omitempty"`
	Title     string `json:"title,omitempty"`
	Prompt    string `json:"prompt,omitempty"`
	ProjectID uint64 `json:"project_id,omitempty"`
	// Credits is what the asset cost; 0 for uploads.
	Credits int64 `json:"credits"`
	// URL is the file's address once the asset is completed, built from
	// the public URL or the server's own address; DownloadURL serves it as
	// an attachment. Both are empty before.
	URL         string `json:"url,omitempty"`
	DownloadURL string `json:"download_url,omitempty"`
	// MimeType, Width, Height and DurationSeconds describe the file, once
	// completed.
	MimeType        string `json:"mime_type,omitempty"`
	Width           int    `json:"width,omitempty"`
	Height          int    `json:"height,omitempty"`
	DurationSeconds int    `json:"duration_seconds,omitempty"`
	// ErrorCode and ErrorMessage say why a failed asset failed.
	ErrorCode    string    `json:"error_code,omitempty"`
	ErrorMessage string    `json:"error_message,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

func assetOf(v wire.View, a sim.Asset) Asset {
	w := v.Asset(a)
	out := Asset{ID: a.ID, WorkspaceID: a.WorkspaceID, Kind: a.Kind, Status: a.Status, Model: a.Model, Title: a.Title,
		Prompt: a.Prompt, ProjectID: a.ProjectID, Credits: a.Credits, URL: w.URL, DownloadURL: w.DownloadURL,
		MimeType: w.MimeType, Width: w.Width, Height: w.Height, DurationSeconds: w.DurationSeconds, CreatedAt: a.CreatedAt.Time()}
	if a.Error != nil {
		out.ErrorCode, out.ErrorMessage = a.Error.Code, a.Error.Message
	}
	return out
}

// FailRule makes the next Count jobs that match it fail.
type FailRule struct {
	// Count is how many jobs fail; at least 1.
	Count int `json:"count"`
	// Modality is image, video, audio, 3d or encore; "" matches any.
	Modality string `json:"modality,omitempty"`
	// Model is a model id or an effect slug; "" matches any.
	Model string `json:"model,omitempty"`
	// Stage is where the job fails: queued, or processing (the default).
	Stage string `json:"stage,omitempty"`
	// Code is the failure's code: provider_error (the default),
	// provider_unavailable, content_policy, timeout, or any other.
	Code string `json:"code,omitempty"`
}

func (r FailRule) front() front.FailRule { return front.FailRule(r) }

// ForcedResponse answers the next Remaining requests of Operation ("*" for
// any) with Status.
type ForcedResponse struct {
	Operation string `json:"operation"`
	Status    int    `json:"status"`
	Remaining int    `json:"remaining"`
}

// Faults is every injected fault of a scope, as GET /_mock/faults shows it.
type Faults struct {
	// Scope is "global" (the faults every workspace meets), or the sandbox
	// ("sandbox sbx_1_4f0c9a2e") or workspace ("workspace 4") they are kept
	// for.
	Scope string `json:"scope"`
	// FailNext are the fail rules still to apply, in order.
	FailNext []FailRule `json:"fail_next"`
	// FailureRate overrides every model's failure rate; nil when not set.
	FailureRate *float64 `json:"failure_rate"`
	// FailPlatforms are the platforms whose deliveries fail ("all" for every one).
	FailPlatforms []string `json:"fail_platforms"`
	// LatencyMS is the wall-clock latency added per operation ("*" for
	// every one), in milliseconds.
	LatencyMS map[string]int64 `json:"latency_ms"`
	// Forced are the forced responses still to come.
	Forced []ForcedResponse `json:"forced_responses"`
	// Rules are the fault rules below a well-formed answer (resets,
	// truncations, latency distributions, file expiry, MCP session loss),
	// in the order they are tried.
	Rules []FaultRule `json:"rules"`
	// GlobalFaults, for a sandbox or a workspace, says whether global faults
	// are set too: they apply to it as well.
	GlobalFaults bool `json:"global_faults"`
}

// FaultSpec is a fault to inject: its kind, whom it targets, how often it
// strikes and the kind's parameters. See the README's "Rehearse failures".
type FaultSpec = fault.Spec

// FaultRule is a fault kept in a scope, with how many requests it matched
// and struck.
type FaultRule = fault.Rule

func faultsOf(f front.Faults) Faults {
	out := Faults{Scope: f.Scope, GlobalFaults: f.GlobalFaults, FailureRate: f.FailureRate, FailPlatforms: f.FailPlatforms, LatencyMS: f.LatencyMS, Rules: f.Rules,
		FailNext: make([]FailRule, 0, len(f.FailNext)), Forced: make([]ForcedResponse, 0, len(f.Forced))}
	for _, r := range f.FailNext {
		out.FailNext = append(out.FailNext, FailRule{Count: r.Count, Modality: r.Modality, Model: r.Model, Stage: r.Stage, Code: r.Code})
	}
	for _, fr := range f.Forced {
		out.Forced = append(out.Forced, ForcedResponse(fr))
	}
	return out
}

// JournalEntry is one recorded request, as GET /_mock/journal shows it.
type JournalEntry struct {
	// ID is the request id, the X-Request-Id header of the answer.
	ID string `json:"id"`
	// Time is the wall-clock time the request arrived; SimTime the
	// simulated time it was answered.
	Time    time.Time `json:"time"`
	SimTime time.Time `json:"sim_time"`
	// Front is rest or mcp.
	Front  string `json:"front,omitempty"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// MCPMethod is the JSON-RPC method of an MCP message (tools/call).
	MCPMethod string `json:"mcp_method,omitempty"`
	// Operation is the operationId of openapi.json the request called.
	Operation string `json:"operation,omitempty"`
	// Status is the HTTP status; for an MCP tool call, the status the
	// operation answered, as REST would have.
	Status      int    `json:"status"`
	ErrorCode   string `json:"error_code,omitempty"`
	WorkspaceID uint64 `json:"workspace_id,omitempty"`
	// SandboxID is the sandbox the workspace is, if it is one.
	SandboxID  string  `json:"sandbox_id,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	// InjectedLatencyMS is the latency a fault added.
	InjectedLatencyMS  int64  `json:"injected_latency_ms,omitempty"`
	RequestContentType string `json:"request_content_type,omitempty"`
	// RequestBytes and ResponseBytes count the whole bodies; the bodies
	// are kept up to the journal's cap (Truncated says when cut).
	RequestBytes          int64  `json:"request_bytes"`
	RequestBody           string `json:"request_body,omitempty"`
	RequestBodyTruncated  bool   `json:"request_body_truncated,omitempty"`
	ResponseBytes         int64  `json:"response_bytes"`
	ResponseBody          string `json:"response_body,omitempty"`
	ResponseBodyTruncated bool   `json:"response_body_truncated,omitempty"`
	// Fault names the injected faults the exchange met ("latency,truncate");
	// FaultRule the rules that struck, or "header", in the same order.
	Fault     string `json:"fault,omitempty"`
	FaultRule string `json:"fault_rule,omitempty"`
	// Evolved names what an evolve fault added to the answer: fields by
	// path ($.assets[0].region), enum values by path and values
	// ($.status: moderating (was processing)), headers ("header
	// X-Service-Region"), and "keys reordered".
	Evolved []string `json:"evolved,omitempty"`
}

func journalEntryOf(e journal.Entry) JournalEntry {
	parse := func(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, s); return t }
	return JournalEntry{ID: e.ID, Time: parse(e.Time), SimTime: parse(e.SimTime), Front: e.Front, Method: e.Method, Path: e.Path,
		Query: e.Query, MCPMethod: e.MCPMethod, Operation: e.Operation, Status: e.Status, ErrorCode: e.ErrorCode,
		WorkspaceID: e.WorkspaceID, SandboxID: e.SandboxID, DurationMS: e.DurationMS, InjectedLatencyMS: e.InjectedLatencyMS,
		RequestContentType: e.RequestContentType, RequestBytes: e.RequestBytes, RequestBody: e.RequestBody,
		RequestBodyTruncated: e.RequestBodyTruncated, ResponseBytes: e.ResponseBytes, ResponseBody: e.ResponseBody,
		ResponseBodyTruncated: e.ResponseBodyTruncated, Fault: e.Fault, FaultRule: e.FaultRule, Evolved: e.Evolved}
}

// JournalFilter selects journal entries; zero fields match everything.
type JournalFilter struct {
	Front       string // rest or mcp
	ID          string // the request id
	Method      string
	PathPrefix  string
	Status      int
	Operation   string
	WorkspaceID uint64
	SandboxID   string
	// Limit caps how many entries, newest first; 0 means all.
	Limit int
}

func (f JournalFilter) journal() journal.Filter { return journal.Filter(f) }

// Coverage reports what the clients exercised, as GET /_mock/coverage
// shows it: each operation of openapi.json with each declared status (and
// any other status it answered), and each lifecycle path of the simulation.
type Coverage struct {
	Operations []OperationCoverage `json:"operations"`
	// Lifecycle counts how often each path of the simulation was taken:
	// generation_completed, generation_failed_refunded, ...
	Lifecycle map[string]int `json:"lifecycle"`
	// FailurePaths list every kind of injected fault: how often the
	// clients met it, and what they did next.
	FailurePaths []FailurePath   `json:"failure_paths"`
	Summary      CoverageSummary `json:"summary"`
}

// FailurePath is how often the clients met a kind of fault, and what their
// next request was: retried, resumed_with_range, reread, reinitialized,
// resumed_stream or other.
type FailurePath = journal.FailurePath

// OperationCoverage is one operation's answers.
type OperationCoverage struct {
	Operation string           `json:"operation"`
	Method    string           `json:"method"`
	Path      string           `json:"path"`
	Statuses  []StatusCoverage `json:"statuses"`
	// Fronts counts the calls per front (rest, mcp).
	Fronts map[string]int `json:"fronts,omitempty"`
}

// StatusCoverage is how often an operation answered a status, and whether
// openapi.json declares it.
type StatusCoverage struct {
	Status   int  `json:"status"`
	Count    int  `json:"count"`
	Declared bool `json:"declared"`
}

// CoverageSummary totals a coverage report.
type CoverageSummary struct {
	OperationsExercised int `json:"operations_exercised"`
	Operations          int `json:"operations"`
	StatusesExercised   int `json:"statuses_exercised"`
	StatusesDeclared    int `json:"statuses_declared"`
	LifecycleTaken      int `json:"lifecycle_paths_taken"`
	LifecyclePaths      int `json:"lifecycle_paths"`
	FaultKindsMet       int `json:"fault_kinds_met"`
	FaultKinds          int `json:"fault_kinds"`
}

func coverageOf(c journal.Coverage) Coverage {
	out := Coverage{Lifecycle: c.Lifecycle, FailurePaths: c.FailurePaths, Summary: CoverageSummary(c.Summary)}
	for _, oc := range c.Operations {
		o := OperationCoverage{Operation: oc.Operation, Method: oc.Method, Path: oc.Path, Fronts: oc.Fronts}
		for _, sc := range oc.Statuses {
			o.Statuses = append(o.Statuses, StatusCoverage(sc))
		}
		out.Operations = append(out.Operations, o)
	}
	return out
}

func (c Coverage) journal() journal.Coverage {
	out := journal.Coverage{Lifecycle: c.Lifecycle, FailurePaths: c.FailurePaths, Summary: journal.CoverageSummary(c.Summary)}
	for _, oc := range c.Operations {
		o := journal.OperationCoverage{Operation: oc.Operation, Method: oc.Method, Path: oc.Path, Fronts: oc.Fronts}
		for _, sc := range oc.Statuses {
			o.Statuses = append(o.Statuses, journal.StatusCoverage(sc))
		}
		out.Operations = append(out.Operations, o)
	}
	return out
}

// WriteTable prints the report as a table: every operation with the
// statuses it answered and those it never did, then the lifecycle paths.
func (c Coverage) WriteTable(w io.Writer) error { return c.journal().WriteTable(w) }
