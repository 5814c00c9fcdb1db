package controlapi

import "time"

// ClientReport is the grade of the clients of a scope, as GET
// /_mock/report shows it.
type ClientReport struct {
	// Scope is what the report covers: "the server", "workspace N" or
	// "sandbox sbx_...".
	Scope string `json:"scope"`
	// GeneratedAt is when the report was made, on the mock's clock.
	GeneratedAt time.Time `json:"generated_at"`
	// Summary counts what the report read.
	Summary ClientSummary `json:"summary"`
	// Findings are the rules the clients broke, in the order of the rules.
	Findings []ClientFinding `json:"findings"`
	// Jobs say how each job was followed.
	Jobs []ClientJob `json:"jobs"`
	// FailOn is what makes the report fail: finding ids or severities.
	FailOn []string `json:"fail_on"`
	// Failed says a finding matched FailOn.
	Failed bool `json:"failed"`
}

// ClientSummary counts what a client report read.
type ClientSummary struct {
	// Requests counts every request of the scope the report followed,
	// since the scope began (or was reset, or its journal cleared): the
	// report is kept as each is recorded, whatever the journal's size.
	Requests int `json:"requests"`
	// Dropped counts the requests the journal no longer holds (it keeps
	// the last ones): the findings still count them, but cannot cite them
	// as examples.
	Dropped int64 `json:"dropped"`
	// Jobs counts the jobs the clients made or read.
	Jobs int `json:"jobs"`
	// RateLimited counts the answers 429 rate_limited.
	RateLimited int `json:"rate_limited"`
	// ReadShare is the share of the requests that read a job (0 to 1).
	ReadShare float64 `json:"read_share"`
	// Minutes are the rate windows the requests fell in, on the mock's
	// clock, oldest first: how each minute's budget was spent.
	Minutes []ClientMinute `json:"minutes"`
}

// ClientMinute is one minute of a workspace's requests, as the rate limit
// counts them.
type ClientMinute struct {
	// Start is the minute's start, on the mock's clock.
	Start time.Time `json:"start"`
	// WorkspaceID is the workspace whose window it is.
	WorkspaceID uint64 `json:"workspace_id"`
	// Requests counts the requests that count against the window.
	Requests int `json:"requests"`
	// Reads counts those that read a job.
	Reads int `json:"reads"`
	// RateLimited counts the answers 429 rate_limited.
	RateLimited int `json:"rate_limited"`
}

// ClientFinding is a rule a client broke, with the requests that show it.
type ClientFinding struct {
	// ID is the finding's stable id (poll-without-wait, ...).
	ID string `json:"id"`
	// Severity is info, warning or error.
	Severity string `json:"severity"`
	// Title names the finding.
	Title string `json:"title"`
	// Count is how many times the client did it.
	Count int `json:"count"`
	// Detail says what the report saw, in a sentence.
	Detail string `json:"detail"`
	// RequestIDs are the X-Request-Id of requests that show it, of those
	// the journal still holds (at most 20): Seqs, by their ids.
	RequestIDs []string `json:"request_ids"`
	// Seqs are the journal's numbers (seq) of the same requests, oldest
	// first: GET /_mock/journal?after=<seq-1>&limit=1 reads one.
	Seqs []int64 `json:"seqs"`
	// ExamplesDropped counts the requests the report kept as examples of
	// the finding that the journal no longer holds (they are not cited):
	// the finding and its count stand all the same.
	ExamplesDropped int `json:"examples_dropped"`
	// Credits is what the finding cost the workspace (a duplicate
	// creation's charge).
	Credits int64 `json:"credits,omitempty"`
	// Fix says how to fix the client.
	Fix string `json:"fix"`
}

// ClientJob is how a client followed one job.
type ClientJob struct {
	// Kind is generation or encore.
	Kind string `json:"kind"`
	// ID is the generation's first asset id, or the Encore creation's id.
	ID uint64 `json:"id"`
	// WorkspaceID is the job's workspace.
	WorkspaceID uint64 `json:"workspace_id"`
	// Status is the job's status now.
	Status string `json:"status"`
	// Reads counts the reads of the job up to and with the first one that
	// saw it done (every read when none did).
	Reads int `json:"reads"`
	// ReadsAfter counts the reads after the first one that saw it done.
	ReadsAfter int `json:"reads_after_done"`
	// Waited says the creation or a read passed wait_seconds.
	Waited bool `json:"waited"`
	// LagSeconds is how long after the job finished the client first saw
	// it done, on the mock's clock; nil while it has not.
	LagSeconds *float64 `json:"lag_seconds,omitempty"`
}
