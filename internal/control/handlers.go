package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/report"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

var routes = []route{
	{"GET", "/health", opHealth, health},
	{"GET", "/openapi.json", opDocument, nil},
	{"GET", "/clock", "getClock", clock},
	{"POST", "/clock/advance", "advanceClock", advance},
	{"POST", "/clock/set", "setClock", setClock},
	{"PUT", "/clock/mode", "setClockMode", clockMode},
	{"POST", "/clock/resync", "resyncClock", resyncClock},
	{"GET", "/faults", "getFaults", faults},
	{"DELETE", "/faults", "clearFaults", clearFaults},
	{"POST", "/faults/fail-next", "failNext", failNext},
	{"PUT", "/faults/failure-rate", "setFailureRate", failureRate},
	{"PUT", "/faults/platforms/{platform}", "failPlatform", platform(true)},
	{"DELETE", "/faults/platforms/{platform}", "unfailPlatform", platform(false)},
	{"PUT", "/faults/latency/{operation}", "setLatency", latency(true)},
	{"DELETE", "/faults/latency/{operation}", "clearLatency", latency(false)},
	{"POST", "/faults/responses", "forceResponses", force},
	{"POST", "/faults/rules", "addFaultRule", addFaultRule},
	{"DELETE", "/faults/rules/{rule}", "deleteFaultRule", deleteFaultRule},
	{"POST", "/assets/{id}/{action}", "controlAsset", jobAction(assetJob)},
	{"POST", "/encore/creations/{id}/{action}", "controlEncore", jobAction(encoreJob)},
	{"POST", "/publications/{id}/cancel", "cancelPublication", cancelPublication},
	{"GET", "/jobs", "listJobs", jobs},
	{"GET", "/assets", "listAllAssets", assets},
	{"GET", "/publications", "listAllPublications", publications},
	{"GET", "/workspaces", "listWorkspaces", workspaces},
	{"POST", "/workspaces", "addWorkspace", addWorkspace},
	{"GET", "/workspaces/{id}", "getWorkspace", workspace},
	{"POST", "/workspaces/{id}/tokens", "addToken", addToken},
	{"POST", "/workspaces/{id}/credits", "grantCredits", grant},
	{"GET", "/workspaces/{id}/ledger", "getLedger", ledger},
	{"GET", "/journal", "getJournal", journalEntries},
	{"DELETE", "/journal", "clearJournal", clearJournal},
	{"GET", "/journal/wait", "waitJournal", waitJournal},
	{"GET", "/coverage", "getCoverage", coverage},
	{"GET", "/report", "getReport", clientReport},
	{"GET", "/metrics", opMetrics, nil},
	{"DELETE", "/coverage", "resetCoverage", resetCoverage},
	{"POST", "/reset", "reset", reset},
	{"GET", "/snapshot", opSnapshot, nil},
	{"PUT", "/snapshot", opRestore, nil},
	{"GET", "/events", opEvents, nil},
	{"POST", "/sandboxes", "createSandbox", createSandbox},
	{"GET", "/sandboxes", "listSandboxes", listSandboxes},
	{"GET", "/sandboxes/{sandbox}", "getSandbox", getSandbox},
	{"DELETE", "/sandboxes/{sandbox}", "deleteSandbox", deleteSandbox},
	{"POST", "/sandboxes/{sandbox}/reset", "resetSandbox", resetSandbox},
	{"POST", "/sandboxes/{sandbox}/run", "runSandbox", runSandbox},
}

// --- health and clock

type healthJSON struct {
	Status string `json:"status"`
	Clock  string `json:"clock"`
	Now    string `json:"now"`
}

// health answers 200 while the server serves, 503 once it is stopping.
func health(c *call) (int, any, error) {
	status, code := "ok", http.StatusOK
	if c.env.Stop.Err() != nil {
		status, code = "stopping", http.StatusServiceUnavailable
	}
	clock := c.env.Eng.Clock()
	return code, healthJSON{Status: status, Clock: string(clock.Mode()), Now: sim.FormatTime(clock.Now())}, nil
}

// Clock is the clock as the control API shows it.
type Clock struct {
	Now         string `json:"now"`
	Mode        string `json:"mode"`
	NextEventAt string `json:"next_event_at,omitempty"`
	// OffsetSeconds is how far a real clock is ahead of the wall clock
	// (negative: behind), in whole seconds; absent in the other modes.
	OffsetSeconds *int64 `json:"offset_seconds,omitempty"`
}

// ClockOf renders the engine's clock.
func ClockOf(eng *sim.Engine) Clock {
	c := eng.Clock()
	out := Clock{Now: sim.FormatTime(c.Now()), Mode: string(c.Mode())}
	if off, ok := c.Offset(); ok {
		secs := int64(off.Round(time.Second) / time.Second)
		out.OffsetSeconds = &secs
	}
	if next, ok, _ := eng.NextDue(); ok {
		out.NextEventAt = NextEventTime(next)
	}
	return out
}

// NextEventTime renders when the next event is due in whole seconds, like
// every time of the API, rounded up: moving the clock to it fires the event.
func NextEventTime(t time.Time) string {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return sim.FormatTime(t)
}

func (c *call) clock() (int, any, error) { return http.StatusOK, ClockOf(c.env.Eng), nil }

func clock(c *call) (int, any, error) { return c.clock() }

func advance(c *call) (int, any, error) {
	var body struct {
		Seconds  *float64 `json:"seconds"`
		Duration string   `json:"duration"`
	}
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	d := time.Duration(0)
	if body.Seconds != nil {
		if *body.Seconds > sim.MaxTime.Sub(c.env.Eng.Clock().Now()).Seconds() {
			return 0, nil, sim.InvalidError([]sim.Violation{{In: "body", Field: "seconds", Reason: "would move the clock past " + sim.FormatTime(sim.MaxTime)}})
		}
		d = time.Duration(*body.Seconds * float64(time.Second))
	} else {
		var err error
		if d, err = time.ParseDuration(body.Duration); err != nil {
			return 0, nil, sim.InvalidError([]sim.Violation{{In: "body", Field: "duration", Reason: err.Error()}})
		}
	}
	if _, err := c.env.Eng.Advance(d); err != nil {
		return 0, nil, err
	}
	return c.clock()
}

func setClock(c *call) (int, any, error) {
	var body struct {
		Time time.Time `json:"time"`
	}
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	if err := c.env.Eng.SetTime(body.Time); err != nil {
		return 0, nil, err
	}
	return c.clock()
}

func resyncClock(c *call) (int, any, error) {
	if _, err := c.env.Eng.ResyncClock(); err != nil {
		return 0, nil, err
	}
	return c.clock()
}

func clockMode(c *call) (int, any, error) {
	var body struct {
		Mode string `json:"mode"`
	}
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	if err := c.env.Eng.SetClockMode(sim.ClockMode(body.Mode)); err != nil {
		return 0, nil, err
	}
	return c.clock()
}

// --- faults

func (c *call) faults() (int, any, error) {
	f, err := c.env.Faults(c.scope.ws)
	return http.StatusOK, f, err
}

func faults(c *call) (int, any, error) { return c.faults() }

func clearFaults(c *call) (int, any, error) {
	if err := c.env.ClearFaults(c.scope.ws); err != nil {
		return 0, nil, err
	}
	return c.faults()
}

func failNext(c *call) (int, any, error) {
	var rule controlapi.FailRule
	if err := c.decode(&rule); err != nil {
		return 0, nil, err
	}
	if err := c.env.FailNext(c.scope.ws, rule); err != nil {
		return 0, nil, err
	}
	return c.faults()
}

func failureRate(c *call) (int, any, error) {
	var body struct {
		Rate *float64 `json:"rate"`
	}
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	if err := c.env.SetFailureRate(c.scope.ws, body.Rate); err != nil {
		return 0, nil, err
	}
	return c.faults()
}

func platform(fail bool) handlerFunc {
	return func(c *call) (int, any, error) {
		if err := c.env.FailPlatform(c.scope.ws, c.vars["platform"], fail); err != nil {
			return 0, nil, err
		}
		return c.faults()
	}
}

func latency(set bool) handlerFunc {
	return func(c *call) (int, any, error) {
		var body struct {
			MS int64 `json:"ms"`
		}
		if set {
			if err := c.decode(&body); err != nil {
				return 0, nil, err
			}
		}
		if err := c.env.SetLatency(c.scope.ws, c.vars["operation"], time.Duration(body.MS)*time.Millisecond); err != nil {
			return 0, nil, err
		}
		return c.faults()
	}
}

func force(c *call) (int, any, error) {
	var body struct {
		Operation string `json:"operation"`
		Status    int    `json:"status"`
		Count     int    `json:"count"`
	}
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	if err := c.env.ForceResponses(c.scope.ws, body.Operation, body.Status, body.Count); err != nil {
		return 0, nil, err
	}
	return c.faults()
}

func addFaultRule(c *call) (int, any, error) {
	var spec fault.Spec
	if err := c.decode(&spec); err != nil {
		return 0, nil, err
	}
	rule, err := c.env.AddFaultRule(c.scope.ws, spec)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, rule, nil
}

func deleteFaultRule(c *call) (int, any, error) {
	if err := c.env.DeleteFaultRule(c.scope.ws, c.vars["rule"]); err != nil {
		return 0, nil, err
	}
	return c.faults()
}

// --- jobs

// assetJob and encoreJob act on the job of an asset or an Encore creation
// and render it as the service does.
func assetJob(c *call, action sim.JobAction, code string) (any, error) {
	g, err := c.env.Eng.ControlAsset(c.id(), action, code)
	return c.env.View(c.r).Generation(g), err
}

func encoreJob(c *call, action sim.JobAction, code string) (any, error) {
	v, err := c.env.Eng.ControlEncore(c.id(), action, code)
	return c.env.View(c.r).Encore(v), err
}

func jobAction(act func(*call, sim.JobAction, string) (any, error)) handlerFunc {
	return func(c *call) (int, any, error) {
		var body struct {
			Code string `json:"code"`
		}
		if err := c.decode(&body); err != nil {
			return 0, nil, err
		}
		out, err := act(c, sim.JobAction(c.vars["action"]), body.Code)
		return http.StatusOK, out, err
	}
}

func cancelPublication(c *call) (int, any, error) {
	p, err := c.env.Eng.CancelPublicationAny(c.id())
	return http.StatusOK, wire.PublicationOf(p), err
}

// --- workspaces

type workspaceJSON struct {
	ID                uint64 `json:"id"`
	Name              string `json:"name"`
	SandboxID         string `json:"sandbox_id,omitempty"`
	Plan              string `json:"plan"`
	CreditsBalance    int64  `json:"credits_balance"`
	RateLimit         int    `json:"rate_limit_per_minute"`
	PublishingAllowed bool   `json:"publishing_allowed"`
}

func workspaces(c *call) (int, any, error) {
	list, err := c.env.Eng.Workspaces()
	out := make([]workspaceJSON, 0, len(list))
	for _, w := range list {
		out = append(out, c.workspaceJSON(w))
	}
	return http.StatusOK, out, err
}

// workspaceJSON renders a workspace, naming the sandbox it is, if any.
func (c *call) workspaceJSON(w sim.Workspace) workspaceJSON {
	out := workspaceJSON{ID: w.ID, Name: w.Name, Plan: w.Plan, CreditsBalance: w.Balance, RateLimit: w.RateLimit, PublishingAllowed: w.PublishingAllowed}
	if sb, ok := c.env.Eng.SandboxOf(w.ID); ok {
		out.SandboxID = sb.ID
	}
	return out
}

func addWorkspace(c *call) (int, any, error) {
	var spec sim.WorkspaceSpec
	if err := c.decode(&spec); err != nil {
		return 0, nil, err
	}
	ws, err := c.env.Eng.AddWorkspace(spec)
	return http.StatusCreated, ws, err
}

func addToken(c *call) (int, any, error) {
	var spec sim.TokenSpec
	if err := c.decode(&spec); err != nil {
		return 0, nil, err
	}
	tok, err := c.env.Eng.AddToken(c.id(), spec)
	return http.StatusCreated, tok, err
}

type balanceJSON struct {
	WorkspaceID uint64 `json:"workspace_id"`
	Balance     int64  `json:"credits_balance"`
}

func grant(c *call) (int, any, error) {
	var body struct {
		Amount int64  `json:"amount"`
		Note   string `json:"note"`
	}
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	bal, err := c.env.Eng.GrantCredits(c.id(), body.Amount, body.Note)
	return http.StatusOK, balanceJSON{WorkspaceID: c.id(), Balance: bal}, err
}

type ledgerJSON struct {
	WorkspaceID uint64            `json:"workspace_id"`
	Balance     int64             `json:"credits_balance"`
	Entries     []sim.LedgerEntry `json:"entries"`
}

func ledger(c *call) (int, any, error) {
	id := c.id()
	bal, err := c.env.Eng.Balance(id)
	if err != nil {
		return 0, nil, err
	}
	entries, err := c.env.Eng.Ledger(id)
	if entries == nil {
		entries = []sim.LedgerEntry{}
	}
	return http.StatusOK, ledgerJSON{WorkspaceID: id, Balance: bal, Entries: entries}, err
}

// --- journal and coverage

type journalJSON struct {
	Size     int             `json:"size"`
	BodyCap  int             `json:"body_cap_bytes"`
	Recorded int64           `json:"recorded"`
	Seq      int64           `json:"seq"`
	Waiting  int             `json:"waiting"`
	Entries  []journal.Entry `json:"entries"`
}

// ring is the journal of the call's scope: a sandbox's own, or the
// server's (a workspace's entries are the server's, filtered).
func (c *call) ring() *journal.Journal {
	if c.scope.sandbox != nil {
		if j, ok := c.env.Journals.Of(c.scope.ws); ok {
			return j
		}
		return nil // journals are off
	}
	return c.env.Journal
}

func (c *call) journal(f journal.Filter) (int, any, error) {
	j := c.ring()
	seq := j.Seq() // before the list: a wait after it misses nothing listed or not
	out := journalJSON{Entries: j.List(f), Seq: seq, Waiting: j.Waiting()}
	out.Size, out.BodyCap, out.Recorded = j.Stats()
	return http.StatusOK, out, nil
}

// filter reads the journal's filters from the query (validated by
// control.json).
func (c *call) filter() journal.Filter {
	q := c.r.URL.Query()
	f := journal.Filter{ID: q.Get("id"), Front: q.Get("front"), Method: q.Get("method"), PathPrefix: q.Get("path"), Operation: q.Get("operation"), Limit: 100}
	f.Status, _ = strconv.Atoi(q.Get("status"))
	f.WorkspaceID, _ = strconv.ParseUint(q.Get("workspace_id"), 10, 64)
	f.After, _ = strconv.ParseInt(q.Get("after"), 10, 64)
	if c.scope.bound {
		f.WorkspaceID = 0 // the ring holds the sandbox's alone
	}
	return f
}

func journalEntries(c *call) (int, any, error) {
	f := c.filter()
	if l, err := strconv.Atoi(c.r.URL.Query().Get("limit")); err == nil {
		f.Limit = l
	}
	return c.journal(f)
}

// waitJournal answers with the first request after the query's after that
// matches its filters, once it is journaled (Journal.Wait), or
// request_not_seen when the timeout passes or the server stops.
func waitJournal(c *call) (int, any, error) {
	q := c.r.URL.Query()
	timeout := 10.0
	if t, err := strconv.ParseFloat(q.Get("timeout"), 64); err == nil {
		timeout = t
	}
	j, f := c.ring(), c.filter()
	if !q.Has("after") {
		f.After = j.Seq() // from now on
	}
	ctx, cancel := c.env.UntilStop(c.r.Context())
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

func clearJournal(c *call) (int, any, error) {
	c.ring().Clear()
	return c.journal(journal.Filter{})
}

// clientReport grades the clients of the call's scope from its journal
// (internal/report): as JSON, text or JUnit XML.
func clientReport(c *call) (int, any, error) {
	q := c.r.URL.Query()
	var failOn []string
	for v := range strings.SplitSeq(q.Get("fail_on"), ",") {
		if v = strings.TrimSpace(v); v != "" {
			failOn = append(failOn, v)
		}
	}
	if err := report.ValidFailOn(failOn); err != nil {
		return 0, nil, &sim.Error{Kind: sim.EINVALID, Code: "validation_failed", Message: err.Error() + ".",
			Details: map[string]any{"violations": []map[string]any{{"field": "fail_on", "in": "query", "message": err.Error()}}}}
	}
	f := journal.Filter{}
	scope := "the server"
	switch {
	case c.scope.sandbox != nil:
		scope = "sandbox " + c.scope.sandbox.ID
	case q.Get("workspace_id") != "":
		f.WorkspaceID, _ = strconv.ParseUint(q.Get("workspace_id"), 10, 64)
		scope = "workspace " + q.Get("workspace_id")
	}
	r, err := report.Of(c.ring(), f, scope, c.env.Eng, failOn)
	if err != nil {
		return 0, nil, err
	}
	switch q.Get("format") {
	case "text":
		return http.StatusOK, edge.Raw{ContentType: "text/plain; charset=utf-8", Data: report.Text(r)}, nil
	case "junit":
		return http.StatusOK, edge.Raw{ContentType: "application/xml", Data: report.JUnit(r)}, nil
	}
	return http.StatusOK, r, nil
}

func coverage(c *call) (int, any, error) { return http.StatusOK, c.env.CoverageReport(c.scope.ws), nil }

func resetCoverage(c *call) (int, any, error) {
	c.env.ResetCoverage(c.scope.ws)
	return coverage(c)
}

// --- state

func reset(c *call) (int, any, error) {
	if err := c.env.Reset(); err != nil {
		return 0, nil, err
	}
	return c.clock()
}

func (c *call) snapshot() {
	var buf bytes.Buffer
	if _, err := c.env.Eng.Snapshot(&buf); err != nil {
		edge.WriteError(c.w, err)
		return
	}
	h := c.w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="mediamock-snapshot.db"`)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	c.w.WriteHeader(http.StatusOK)
	c.w.Write(buf.Bytes())
}

func (c *call) restore() (int, any, error) {
	body := &readErr{r: c.r.Body}
	if err := c.env.Eng.Restore(body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(body.err, &mbe) {
			return 0, nil, problem.TooLarge(mbe.Limit)
		}
		return 0, nil, err
	}
	if err := c.env.Restored(); err != nil {
		return 0, nil, err
	}
	return c.clock()
}

// readErr remembers the error its reader returned.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}
