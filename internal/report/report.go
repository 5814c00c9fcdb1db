// Package report grades a client of the service from what the journal
// recorded of it: how it polled its jobs, how it spent its rate window,
// whether it repeated paid creations, how it fetched files, and what it
// wasted. Each finding has a stable id (Rules), a severity, a count and the
// request ids that prove it.
//
// The report reads the journal of a scope, oldest entry first, and asks
// the engine only when a job finished (Input.Job): whether a read saw a
// job done is decided on the simulated clock, so the same run gives the
// same report, on every clock mode.
package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/sim"
)

// The report's types are the control API's (package controlapi).
type (
	Report  = controlapi.ClientReport
	Finding = controlapi.ClientFinding
	Job     = controlapi.ClientJob
	Summary = controlapi.ClientSummary
)

// Input is what the report is made from.
type Input struct {
	Scope string
	Now   time.Time // the mock's clock
	// Entries are the journal's, oldest first; Recorded counts every
	// entry the journal recorded (it may have dropped the oldest).
	Entries  []controlapi.JournalEntry
	Recorded int64
	// Job returns the job a client knows by ref.
	Job func(ref sim.JobRef) (sim.Job, bool, error)
	// FailOn lists finding ids and severities that fail the report.
	FailOn []string
}

// Of grades the clients whose requests journal j holds that match f.
func Of(j *journal.Journal, f journal.Filter, scope string, eng *sim.Engine, failOn []string) (Report, error) {
	entries := j.List(f)
	slices.Reverse(entries)
	_, _, recorded := j.Stats()
	if f.WorkspaceID != 0 || f.SandboxID != "" {
		recorded = int64(len(entries)) // a workspace's share of what was dropped is not known
	}
	return Build(Input{Scope: scope, Now: eng.Clock().Now(), Entries: entries, Recorded: recorded, Job: eng.JobOf, FailOn: failOn})
}

const maxIDs = 20

// finder collects the findings of one rule.
type finder struct {
	rule    Rule
	count   int
	ids     []string
	credits int64
	detail  string
}

func (f *finder) add(ids ...string) {
	f.count++
	for _, id := range ids {
		if len(f.ids) < maxIDs && id != "" && !slices.Contains(f.ids, id) {
			f.ids = append(f.ids, id)
		}
	}
}

// Build grades the clients of the input's entries.
func Build(in Input) (Report, error) {
	r := Report{Scope: in.Scope, GeneratedAt: in.Now.UTC(), Findings: []Finding{}, Jobs: []Job{}, FailOn: in.FailOn}
	if r.FailOn == nil {
		r.FailOn = []string{}
	}
	found := map[string]*finder{}
	for _, rule := range Rules {
		found[rule.ID] = &finder{rule: rule}
	}
	g := grader{in: in, found: found, jobs: map[jobKey]*jobState{}}
	if err := g.run(); err != nil {
		return r, err
	}
	r.Summary = g.summary
	for _, rule := range Rules {
		f := found[rule.ID]
		if f.count == 0 {
			continue
		}
		r.Findings = append(r.Findings, Finding{ID: rule.ID, Severity: rule.Severity, Title: rule.Title, Count: f.count,
			Detail: f.detail, RequestIDs: f.ids, Credits: f.credits, Fix: rule.Fix})
	}
	for _, k := range g.order {
		r.Jobs = append(r.Jobs, g.jobs[k].Job)
	}
	for _, f := range r.Findings {
		r.Failed = r.Failed || matches(r.FailOn, f)
	}
	return r, nil
}

// grader walks the entries once.
type grader struct {
	in      Input
	found   map[string]*finder
	jobs    map[jobKey]*jobState
	order   []jobKey
	summary Summary

	reads int
	// per workspace
	retryUntil   map[uint64]time.Time // Retry-After of the last 429
	lastFailure  map[string]controlapi.JournalEntry
	fileTrouble  map[uint64]int
	expired      map[string]bool // file addresses answered file_url_expired
	cutShort     map[string]bool // file paths whose download was cut short
	lostCreation []controlapi.JournalEntry
	initializes  []string
	toolCalls    int
	minutes      map[minuteKey]*controlapi.ClientMinute
	minuteOrder  []minuteKey
}

type minuteKey struct {
	ws    uint64
	start int64
}

// minute is the rate window of a request that counts against it.
func (g *grader) minute(e *controlapi.JournalEntry) *controlapi.ClientMinute {
	start := e.SimTime.Truncate(time.Minute)
	k := minuteKey{e.WorkspaceID, start.Unix()}
	m, ok := g.minutes[k]
	if !ok {
		m = &controlapi.ClientMinute{Start: start.UTC(), WorkspaceID: e.WorkspaceID}
		g.minutes[k] = m
		g.minuteOrder = append(g.minuteOrder, k)
	}
	return m
}

func (g *grader) run() error {
	g.retryUntil, g.lastFailure = map[uint64]time.Time{}, map[string]controlapi.JournalEntry{}
	g.fileTrouble, g.expired, g.cutShort = map[uint64]int{}, map[string]bool{}, map[string]bool{}
	g.minutes = map[minuteKey]*controlapi.ClientMinute{}
	g.summary.Requests = len(g.in.Entries)
	g.summary.Dropped = max(0, g.in.Recorded-int64(len(g.in.Entries)))
	for i := range g.in.Entries {
		if err := g.entry(&g.in.Entries[i]); err != nil {
			return err
		}
	}
	g.finish()
	if g.summary.Requests > 0 {
		g.summary.ReadShare = float64(g.reads) / float64(g.summary.Requests)
	}
	g.summary.Jobs = len(g.order)
	g.summary.Minutes = []controlapi.ClientMinute{}
	for _, k := range g.minuteOrder {
		g.summary.Minutes = append(g.summary.Minutes, *g.minutes[k])
	}
	return nil
}

func (g *grader) entry(e *controlapi.JournalEntry) error {
	g.outside(e)
	ws := e.WorkspaceID
	c := callOf(e)
	if ws != 0 && counts(e) {
		m := g.minute(e)
		m.Requests++
		if _, ok := reads[c.op]; ok {
			m.Reads++
		}
		if e.Status == 429 && e.ErrorCode == "rate_limited" {
			m.RateLimited++
		}
	}

	// The rate window: a request inside a 429's Retry-After, a retry
	// without backoff.
	if until, ok := g.retryUntil[ws]; ok && ws != 0 && counts(e) && e.SimTime.Before(until) {
		g.found["retry-after-ignored"].add(e.ID)
	}
	if c.op != "" {
		key := strconv.FormatUint(ws, 10) + " " + c.op
		if prev, ok := g.lastFailure[key]; ok {
			if e.SimTime.Sub(prev.SimTime) < 100*time.Millisecond && e.Time.Sub(prev.Time) < 100*time.Millisecond {
				g.found["no-backoff"].add(prev.ID, e.ID)
			}
			delete(g.lastFailure, key)
		}
		if e.Status == 429 || e.Status >= 500 {
			g.lastFailure[key] = *e
		}
	}
	if e.Status == 429 && e.ErrorCode == "rate_limited" {
		g.summary.RateLimited++
		g.found["rate-limited"].add(e.ID)
		g.retryUntil[ws] = e.SimTime.Add(retryAfter(e))
	}

	// MCP sessions.
	if e.Front == "mcp" {
		for m := range strings.SplitSeq(e.MCPMethod, ",") {
			switch m {
			case "initialize":
				g.initializes = append(g.initializes, e.ID)
			case "tools/call":
				g.toolCalls++
			}
		}
	}

	// Files.
	if strings.HasPrefix(e.Path, "/files/") {
		address := e.Path + "?" + e.Query
		switch {
		case g.expired[address]:
			g.found["expired-url-retried"].add(e.ID)
		case g.cutShort[e.Path] && e.Status == 200:
			g.found["download-restarted"].add(e.ID)
		}
		delete(g.cutShort, e.Path)
		if e.ErrorCode == "file_url_expired" {
			g.expired[address] = true
		}
		if lost(e) {
			g.cutShort[e.Path] = true
		}
		if e.Status >= 400 || lost(e) {
			g.fileTrouble[ws]++
		}
		return nil
	}

	// Creations: a repeat after a lost answer; the job it made.
	if kind, ok := creations[c.op]; ok {
		for i, prev := range g.lostCreation {
			if prev.WorkspaceID == ws && prev.Operation == e.Operation && prev.RequestBody == e.RequestBody &&
				e.SimTime.Sub(prev.SimTime) <= 2*time.Minute && !e.RequestBodyTruncated {
				f := g.found["duplicate-creation"]
				f.add(prev.ID, e.ID)
				f.credits += charged(e)
				g.lostCreation = slices.Delete(g.lostCreation, i, i+1)
				break
			}
		}
		if e.Status == 201 && lost(e) {
			g.lostCreation = append(g.lostCreation, *e)
		}
		if e.Status == 201 {
			if id := created(e); id != 0 {
				s, err := g.job(ws, kind, id)
				if err != nil {
					return err
				}
				s.Waited = s.Waited || c.wait
				if s.known && s.job.AtLimit {
					g.found["over-concurrency"].add(e.ID)
				}
				if s.known && s.job.FinishedAt != 0 && !e.SimTime.Before(s.job.FinishedAt.Time()) {
					s.sawDone(e) // it waited, and answered done
				}
			}
		}
		return nil
	}

	// Reads of a job.
	if kind, ok := reads[c.op]; ok {
		g.reads++
		if e.Status == 404 {
			g.found["poll-unknown-id"].add(e.ID)
			return nil
		}
		if e.Status != 200 || c.id == 0 {
			return nil
		}
		s, err := g.job(ws, kind, c.id)
		if err != nil || !s.known {
			return err
		}
		s.Waited = s.Waited || c.wait
		done := s.job.FinishedAt != 0 && !e.SimTime.Before(s.job.FinishedAt.Time())
		switch {
		case s.seenDone:
			if g.fileTrouble[ws] == s.trouble {
				s.ReadsAfter++
				g.found["poll-after-terminal"].add(e.ID)
			}
		case done:
			s.Reads++
			if s.sawDone(e) {
				g.found["late-notice"].add(e.ID)
			}
		default:
			s.Reads++
			if len(s.readIDs) < maxIDs {
				s.readIDs = append(s.readIDs, e.ID)
			}
		}
		s.trouble = g.fileTrouble[ws]
	}
	return nil
}

// finish makes the findings that need every entry.
func (g *grader) finish() {
	polled := g.found["poll-without-wait"]
	for _, k := range g.order {
		s := g.jobs[k]
		if !s.Waited && s.Reads >= 3 {
			polled.add(s.readIDs...)
		}
	}
	if polled.count > 0 {
		polled.detail = fmt.Sprintf("%d jobs polled 3 or more times without wait_seconds.", polled.count)
	}
	if n := len(g.initializes); n >= 3 && g.toolCalls <= n {
		f := g.found["mcp-reinitialize"]
		f.add(g.initializes...)
		f.count = n
		f.detail = fmt.Sprintf("%d initialize requests for %d tool calls.", n, g.toolCalls)
	}
	details := map[string]string{
		"late-notice":         "%d jobs seen done more than 30 s after they finished.",
		"rate-limited":        "%d requests answered 429 rate_limited.",
		"retry-after-ignored": "%d requests sent inside a Retry-After window.",
		"no-backoff":          "%d retries within 100 ms of a 429 or 5xx of the same operation.",
		"duplicate-creation":  "%d creations repeated after a lost answer.",
		"expired-url-retried": "%d requests of a file address that had answered file_url_expired.",
		"download-restarted":  "%d interrupted downloads fetched again whole.",
		"poll-after-terminal": "%d reads of jobs already seen done.",
		"poll-unknown-id":     "%d reads answered 404.",
		"over-concurrency":    "%d creations made at the concurrency limit of their modality.",
	}
	for id, format := range details {
		if f := g.found[id]; f.count > 0 && f.detail == "" {
			f.detail = fmt.Sprintf(format, f.count)
		}
	}
	if f := g.found["duplicate-creation"]; f.credits > 0 {
		f.detail += fmt.Sprintf(" They cost %d credits twice.", f.credits)
	}
}
