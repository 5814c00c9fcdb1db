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
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/sim"
)

// Severities, from the least to the most serious.
const (
	Info    = "info"
	Warning = "warning"
	Error   = "error"
)

// Rule is one kind of finding: its stable id, severity, what it means and
// how to fix it in the client.
type Rule struct {
	ID, Severity, Title, Means, Fix string
}

// Rules are the findings the report can make, in the order it lists them.
// An id never changes meaning; a new rule takes a new id.
var Rules = []Rule{
	{"poll-without-wait", Warning, "Polling without wait_seconds",
		"A job was read 3 or more times before it was seen done, and neither its creation nor any read passed `wait_seconds`.",
		"Pass `wait_seconds` (up to 55) on the creation or the read: one request waits for the job instead of many."},
	{"late-notice", Warning, "Finished jobs noticed late",
		"The client first saw a job done more than 30 s (on the mock's clock) after it finished.",
		"Poll more often near the expected end, or long-poll with `wait_seconds`: the read then answers when the job ends."},
	{"rate-limited", Warning, "Rate limit reached",
		"Requests were answered 429 `rate_limited`: the workspace's window was spent.",
		"Spend fewer requests per job (long-poll with `wait_seconds`), and pace requests by `X-RateLimit-Remaining`."},
	{"retry-after-ignored", Error, "Retry-After ignored",
		"A request of the workspace went out before the `Retry-After` of a 429 had passed (on the mock's clock).",
		"After a 429, wait the seconds `Retry-After` says (a whole number) before the next request of the workspace."},
	{"no-backoff", Warning, "Retries without backoff",
		"After a 429 or a 5xx, the same operation was sent again within 100 ms, on both the mock's clock and the wall clock.",
		"Back off exponentially between retries (with jitter), and honour `Retry-After` when there is one."},
	{"duplicate-creation", Error, "Paid creation repeated after a lost answer",
		"A creation was sent again with the same body within 2 minutes after the first one's answer was lost to a transport fault: the first had been accepted and charged, so the work is paid twice.",
		"After a lost answer, look for the first creation (list the library, newest first) before creating again."},
	{"expired-url-retried", Warning, "Expired file address retried",
		"A file address answered 403 `file_url_expired` and the same address was requested again.",
		"Read the asset again (`GET /generations/{id}`) for a fresh address, then download it."},
	{"download-restarted", Warning, "Interrupted download restarted",
		"A file download was cut short, and the file was then fetched whole (200) instead of resumed with `Range` (206).",
		"Resume an interrupted download with `Range: bytes=<received>-`."},
	{"poll-after-terminal", Warning, "Reads after the job was done",
		"A job was read again after the client had seen it completed or failed, with no file trouble in between.",
		"Stop polling a job once a read answers `completed` or `failed`."},
	{"poll-unknown-id", Warning, "Reads of unknown jobs",
		"Reads of a generation, asset or Encore creation answered 404: the client polls ids that do not exist (or are another workspace's).",
		"Poll the ids the creation answered with, with the key of the workspace that made them."},
	{"over-concurrency", Info, "More jobs than the concurrency limit",
		"A creation was made while the workspace already had the modality's limit of jobs running (8 per studio modality, 3 Encore creations): it waited in the queue.",
		"Keep at most the limit of jobs in flight per modality; queue the rest in the client."},
	{"mcp-reinitialize", Warning, "MCP session per call",
		"The client sent 3 or more MCP `initialize` requests and no more tool calls than that: a new session for each call.",
		"Open one MCP session and make every call in it (or speak the sessionless revision 2026-07-28)."},
}

// RuleOf returns the rule of an id.
func RuleOf(id string) (Rule, bool) {
	i := slices.IndexFunc(Rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		return Rule{}, false
	}
	return Rules[i], true
}

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

// ValidFailOn reports what of a fail_on list is neither a finding id nor
// a severity.
func ValidFailOn(list []string) error {
	for _, v := range list {
		if _, ok := RuleOf(v); !ok && v != Info && v != Warning && v != Error {
			return fmt.Errorf("fail_on: %q is neither a finding id nor a severity (info, warning, error)", v)
		}
	}
	return nil
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

type jobKey struct {
	ws   uint64
	kind string
	id   uint64
}

type jobState struct {
	Job
	job      sim.Job
	known    bool
	seenDone bool
	readIDs  []string
	// trouble is the file trouble count of the workspace when the job was
	// last read: a read after new trouble is a re-read for an address.
	trouble int
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
// whole: a delivery fault struck it.
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

func (g *grader) entry(e *controlapi.JournalEntry) error {
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

// sawDone records the answer that first showed the job done, and reports
// whether it came late.
func (s *jobState) sawDone(e *controlapi.JournalEntry) (late bool) {
	s.seenDone = true
	lag := e.SimTime.Sub(s.job.FinishedAt.Time()).Seconds()
	s.LagSeconds = &lag
	return lag > 30
}

// job is the state of a job the client knows by id, looked up once.
func (g *grader) job(ws uint64, kind string, id uint64) (*jobState, error) {
	k := jobKey{ws: ws, kind: kind, id: id}
	if s, ok := g.jobs[k]; ok {
		return s, nil
	}
	ref := sim.JobRef{WorkspaceID: ws, AssetID: id}
	if kind == "encore" {
		ref = sim.JobRef{WorkspaceID: ws, EncoreID: id}
	}
	j, ok, err := g.in.Job(ref)
	if err != nil {
		return nil, err
	}
	if ok && kind == "generation" && len(j.AssetIDs) > 0 && j.AssetIDs[0] != id {
		// Another output of the same generation: the job is its first
		// asset's.
		s, err := g.job(ws, kind, j.AssetIDs[0])
		if err == nil {
			g.jobs[k] = s
		}
		return s, err
	}
	s := &jobState{Job: Job{Kind: kind, ID: id, WorkspaceID: ws, Status: j.Status}, job: j, known: ok}
	if ok {
		g.jobs[k] = s
		g.order = append(g.order, k)
	}
	return s, nil
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

// Text is the report as a person reads it in a terminal.
func Text(r Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Client report for %s: %d requests", r.Scope, r.Summary.Requests)
	if r.Summary.Dropped > 0 {
		fmt.Fprintf(&b, " (the journal dropped %d older ones)", r.Summary.Dropped)
	}
	fmt.Fprintf(&b, ", %d jobs, %d rate limited, %.0f%% of requests read jobs.\n", r.Summary.Jobs, r.Summary.RateLimited, 100*r.Summary.ReadShare)
	var busiest *controlapi.ClientMinute
	for i, m := range r.Summary.Minutes {
		if busiest == nil || m.Requests > busiest.Requests {
			busiest = &r.Summary.Minutes[i]
		}
	}
	if busiest != nil {
		fmt.Fprintf(&b, "Busiest minute: %d requests (%d reads of jobs, %d rate limited) of workspace %d from %s.\n",
			busiest.Requests, busiest.Reads, busiest.RateLimited, busiest.WorkspaceID, busiest.Start.Format(time.RFC3339))
	}
	if len(r.Findings) == 0 {
		b.WriteString("No findings: the client behaved well.\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n%-7s %s (%d): %s\n  %s\n  Fix: %s\n", strings.ToUpper(f.Severity), f.ID, f.Count, f.Title, f.Detail, f.Fix)
		if len(f.RequestIDs) > 0 {
			fmt.Fprintf(&b, "  Requests: %s\n", strings.Join(f.RequestIDs, " "))
		}
	}
	if len(r.Jobs) > 0 {
		b.WriteString("\nJobs:\n")
		for _, j := range r.Jobs {
			lag := "not seen done"
			if j.LagSeconds != nil {
				lag = fmt.Sprintf("seen done %.1f s after it finished", *j.LagSeconds)
			}
			fmt.Fprintf(&b, "  %s %d (workspace %d, %s): %d reads, %d after done, wait_seconds %v, %s\n",
				j.Kind, j.ID, j.WorkspaceID, j.Status, j.Reads, j.ReadsAfter, j.Waited, lag)
		}
	}
	if r.Failed {
		fmt.Fprintf(&b, "\nFAILED: a finding matches --fail-on %s\n", strings.Join(r.FailOn, ","))
	}
	return b.Bytes()
}
