package mediamock

import (
	"time"

	"github.com/mediamock/mediamock/controlapi"
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

// The types of the control API, defined in package controlapi, where go
// doc shows their fields; the Go API takes and returns them under these
// names too.
type (
	// FaultSpec is controlapi.FaultSpec: a fault to inject, its kind, whom
	// it targets, how often it strikes and the kind's parameters. See
	// docs/how-to/rehearse-failures.md.
	FaultSpec = controlapi.FaultSpec
	// FaultRule is controlapi.FaultRule: a fault kept in a scope, with how
	// many requests it matched and struck.
	FaultRule = controlapi.FaultRule
	// Faults is controlapi.Faults: every injected fault of a scope, as GET
	// /_mock/faults shows it.
	Faults = controlapi.Faults
	// FailRule is controlapi.FailRule: the next Count jobs that match it
	// fail.
	FailRule = controlapi.FailRule
	// ForcedResponse is controlapi.ForcedResponse: the next Remaining
	// requests of an operation answer a status.
	ForcedResponse = controlapi.ForcedResponse
	// NamedSnapshot is controlapi.NamedSnapshot: a snapshot saved on the
	// server under a name (Controls.SaveSnapshot).
	NamedSnapshot = controlapi.NamedSnapshot
	// JournalEntry is controlapi.JournalEntry: one recorded request, as GET
	// /_mock/journal shows it.
	JournalEntry = controlapi.JournalEntry
	// ClientReport is controlapi.ClientReport: the grade of the clients of
	// a scope (Controls.Report).
	ClientReport = controlapi.ClientReport
	// ClientFinding is controlapi.ClientFinding: a rule a client broke.
	ClientFinding = controlapi.ClientFinding
	// JournalFilter is controlapi.JournalFilter: which journal entries to
	// list; zero fields match everything.
	JournalFilter = controlapi.JournalFilter
	// Coverage is controlapi.Coverage: what the clients exercised, as GET
	// /_mock/coverage shows it; its WriteTable prints it.
	Coverage = controlapi.Coverage
	// OperationCoverage is controlapi.OperationCoverage: one operation's
	// answers.
	OperationCoverage = controlapi.OperationCoverage
	// StatusCoverage is controlapi.StatusCoverage: how often an operation
	// answered a status, and whether openapi.json declares it.
	StatusCoverage = controlapi.StatusCoverage
	// CoverageSummary is controlapi.CoverageSummary: the totals of a
	// coverage report.
	CoverageSummary = controlapi.CoverageSummary
	// FailurePath is controlapi.FailurePath: how often the clients met a
	// kind of fault, and what their next request was.
	FailurePath = controlapi.FailurePath
)
