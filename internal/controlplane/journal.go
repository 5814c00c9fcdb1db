package controlplane

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/har"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/report"
	"github.com/mediamock/mediamock/sim"
)

type journalJSON struct {
	Size     int             `json:"size"`
	BodyCap  int             `json:"body_cap_bytes"`
	Recorded int64           `json:"recorded"`
	Held     int             `json:"held"`
	Seq      int64           `json:"seq"`
	Waiting  int             `json:"waiting"`
	Entries  []journal.Entry `json:"entries"`
}

// ring is the journal of the call's scope: a sandbox's own, or the
// server's (a workspace's entries are the server's, filtered).
func (r *request) ring() *journal.Journal {
	if r.scope.Sandbox != nil {
		if j, ok := r.p.Journals.Of(r.scope.WS); ok {
			return j
		}
		return nil // journals are off
	}
	return r.p.Journal
}

func (r *request) journal(f journal.Filter) (int, any, error) {
	j := r.ring()
	seq := j.Seq() // before the list: a wait after it misses nothing listed or not
	out := journalJSON{Entries: j.List(f), Seq: seq, Waiting: j.Waiting()}
	out.Size, out.BodyCap, out.Recorded = j.Stats()
	all := f
	all.After, all.Before, all.Limit = 0, 0, 0
	out.Held = j.Count(all)
	return http.StatusOK, out, nil
}

// journalFilter are the journal's filters (validated by control.json).
type journalFilter struct {
	ID          string `query:"id"`
	Front       string `query:"front"`
	Method      string `query:"method"`
	Path        string `query:"path"`
	Operation   string `query:"operation"`
	Status      int    `query:"status"`
	WorkspaceID uint64 `query:"workspace_id"`
}

// filter is the journal's filter of the call.
func (r *request) filter(in journalFilter, after int64) journal.Filter {
	f := journal.Filter{ID: in.ID, Front: in.Front, Method: in.Method, PathPrefix: in.Path, Operation: in.Operation, Limit: 100,
		Status: in.Status, WorkspaceID: in.WorkspaceID, After: after}
	if r.scope.Bound {
		f.WorkspaceID = 0 // the ring holds the sandbox's alone
	}
	return f
}

type journalInput struct {
	journalFilter
	After  int64  `query:"after"`
	Before int64  `query:"before"`
	Limit  int    `query:"limit" default:"100"`
	Format string `query:"format"`
}

func getJournal(r *request, in journalInput) (int, any, error) {
	f := r.filter(in.journalFilter, in.After)
	f.Before = in.Before
	if in.Format == "har" || in.Format == "" && accepts(r.accept, har.ContentType) {
		return http.StatusOK, r.har(f, in.Limit), nil
	}
	f.Limit = in.Limit
	return r.journal(f)
}

// har is the scope's journal as HAR 1.2 (internal/har), streamed: the
// newest limit entries that match f, oldest first, annotated with the
// findings of the scope's client report that cite them. Credentials are
// hidden as the scope's reads hide tokens.
func (r *request) har(f journal.Filter, limit int) Stream {
	j := r.ring()
	opt := har.Options{Base: r.view.Base, Scope: "the server", Filter: f, Limit: limit}
	if r.scope.Sandbox != nil {
		opt.Scope = "sandbox " + r.scope.Sandbox.ID
	}
	if j != nil {
		opt.Findings = report.Cited(j, f.WorkspaceID)
	}
	if r.hideTokens() {
		opt.Hide = func(v string) string {
			scheme, tok, ok := strings.Cut(v, " ")
			if !ok {
				return hidden(v)
			}
			return scheme + " " + hidden(tok)
		}
	}
	return Stream{ContentType: har.ContentType, Filename: "mediamock.har", Write: func(w io.Writer) error { return har.Write(w, j, opt) }}
}

// accepts reports whether an Accept header's value names a media type
// (not by a wildcard).
func accepts(accept, mediaType string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		t, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(t), mediaType) {
			return true
		}
	}
	return false
}

type waitInput struct {
	journalFilter
	// After is nil when absent: the wait is for what comes from now on.
	After   *int64  `query:"after"`
	Timeout float64 `query:"timeout" default:"10"`
}

// waitJournal answers with the first request after the query's after that
// matches its filters, once it is journaled (Journal.Wait), or
// request_not_seen when the timeout passes or the server stops.
func waitJournal(r *request, in waitInput) (int, any, error) {
	var after int64
	if in.After != nil {
		after = *in.After
	}
	j, f := r.ring(), r.filter(in.journalFilter, after)
	if in.After == nil {
		f.After = j.Seq() // from now on
	}
	timeout := in.Timeout
	ctx, cancel := r.p.untilStop(r.ctx)
	defer cancel()
	ctx, cancelWait := context.WithTimeout(ctx, time.Duration(timeout*float64(time.Second)))
	defer cancelWait()
	if e, ok := j.Wait(ctx, f); ok {
		return http.StatusOK, e, nil
	}
	return 0, nil, &sim.Error{Kind: sim.ENOTFOUND, Code: "request_not_seen",
		Message: fmt.Sprintf("No request matching the filters was journaled after entry %d within %g s.", f.After, timeout),
		Details: map[string]any{"timeout_seconds": timeout, "after": f.After, "seq": j.Seq()}}
}

func clearJournal(r *request, _ none) (int, any, error) {
	r.ring().Clear()
	return r.journal(journal.Filter{})
}

type reportInput struct {
	// WorkspaceID is the workspace to grade, as sent; "" for the scope.
	WorkspaceID string `query:"workspace_id"`
	Format      string `query:"format"`
	FailOn      string `query:"fail_on"`
}

// getReport grades the clients of the call's scope from its journal's
// running aggregates (report.Tally): as JSON, text or JUnit XML.
func getReport(r *request, in reportInput) (int, any, error) {
	var failOn []string
	for v := range strings.SplitSeq(in.FailOn, ",") {
		if v = strings.TrimSpace(v); v != "" {
			failOn = append(failOn, v)
		}
	}
	if err := report.ValidFailOn(failOn); err != nil {
		return 0, nil, &sim.Error{Kind: sim.EINVALID, Code: "validation_failed", Message: err.Error() + ".",
			Details: map[string]any{"violations": []map[string]any{{"field": "fail_on", "in": "query", "message": err.Error()}}}}
	}
	var ws uint64
	scope := "the server"
	switch {
	case r.scope.Sandbox != nil:
		scope = "sandbox " + r.scope.Sandbox.ID
	case in.WorkspaceID != "":
		ws, _ = strconv.ParseUint(in.WorkspaceID, 10, 64)
		scope = "workspace " + in.WorkspaceID
	}
	rep, err := report.Of(r.ring(), ws, scope, r.p.Eng.Clock().Now(), failOn)
	if err != nil {
		return 0, nil, err
	}
	switch in.Format {
	case "text":
		return http.StatusOK, Raw{ContentType: "text/plain; charset=utf-8", Data: report.Text(rep)}, nil
	case "junit":
		return http.StatusOK, Raw{ContentType: "application/xml", Data: report.JUnit(rep)}, nil
	}
	return http.StatusOK, rep, nil
}

func getCoverage(r *request, _ none) (int, any, error) {
	return http.StatusOK, r.p.CoverageReport(r.scope.WS), nil
}

func resetCoverage(r *request, _ none) (int, any, error) {
	r.p.ResetCoverage(r.scope.WS)
	return getCoverage(r, none{})
}
