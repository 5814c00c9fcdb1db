package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
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

// journalHead is what a journal's answer says besides its entries.
type journalHead struct {
	Size     int   `json:"size"`
	BodyCap  int   `json:"body_cap_bytes"`
	Recorded int64 `json:"recorded"`
	Held     int   `json:"held"`
	Seq      int64 `json:"seq"`
	Waiting  int   `json:"waiting"`
}

// journalAnswer is a journal's answer, written as it is read (a Stream): its
// entries, newest first, a page at a time, so that a read of 20,000
// entries holds one page of them, not the answer. Entries recorded while
// it is written are not in it, as they were not when it began.
type journalAnswer struct {
	head journalHead
	j    *journal.Journal
	f    journal.Filter
}

// journalPage is how many entries a journal's answer reads at a time.
const journalPage = 64

// WriteJSON writes the answer, as wire.Marshal would encode it whole: the
// head's fields, then "entries", without HTML escapes, and a newline.
func (a *journalAnswer) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a.head); err != nil {
		return err
	}
	head := bytes.TrimSuffix(bytes.TrimSpace(buf.Bytes()), []byte("}"))
	if _, err := w.Write(append(head, `,"entries":[`...)); err != nil {
		return err
	}
	page := make([]journal.Entry, 0, journalPage)
	before, left, first := a.head.Seq+1, a.f.Limit, true
	for left != 0 || a.f.Limit <= 0 {
		n := journalPage
		if a.f.Limit > 0 {
			n = min(n, left)
		}
		page = a.j.Page(a.f, before, n, page[:0])
		if len(page) == 0 {
			break
		}
		buf.Reset()
		for i := range page {
			if !first {
				buf.WriteByte(',')
			}
			first = false
			if err := enc.Encode(&page[i]); err != nil {
				return err
			}
			buf.Truncate(buf.Len() - 1) // the encoder's newline
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
		before, left = page[len(page)-1].Seq, left-len(page)
	}
	_, err := w.Write([]byte("]}\n"))
	return err
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
	a := &journalAnswer{j: j, f: f}
	a.head.Seq = j.Seq() // before the entries: a wait after it misses nothing listed or not
	a.head.Waiting = j.Waiting()
	a.head.Size, a.head.BodyCap, a.head.Recorded = j.Stats()
	all := f
	all.After, all.Before, all.Limit = 0, 0, 0
	a.head.Held = j.Count(all)
	return http.StatusOK, Stream{ContentType: "application/json", Write: a.WriteJSON}, nil
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
