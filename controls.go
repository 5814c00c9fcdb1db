package mediamock

import (
	"context"
	"io"
	"time"

	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/har"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/report"
)

// Controls are the faults, the journal and the coverage of one scope: the
// whole server (a Server's) or one sandbox (a Sandbox's). A fault set on a
// server applies to every workspace, sandboxes included; a fault set on a
// sandbox touches only the requests and jobs of that sandbox. A server's
// journal and coverage hold every request; a sandbox's hold its own.
type Controls struct {
	plane *controlplane.Plane
	ws    uint64        // 0: the whole server
	url   func() string // the server's root address
}

// --- faults

// FailNext makes the next rule.Count matching jobs fail.
func (c Controls) FailNext(rule FailRule) error { return c.plane.FailNext(c.ws, rule) }

// SetFailureRate overrides every model's failure rate (nil: the catalog's,
// or for a sandbox the server's override).
func (c Controls) SetFailureRate(rate *float64) error { return c.plane.SetFailureRate(c.ws, rate) }

// FailPlatform makes deliveries to a platform ("all" for every one) fail
// (or succeed again).
func (c Controls) FailPlatform(platform string, fail bool) error {
	return c.plane.FailPlatform(c.ws, platform, fail)
}

// SetLatency adds wall-clock latency to an operation ("*" for every one);
// zero removes it. It is a fault rule of kind latency (Via "latency"); an
// unknown operation is an error.
func (c Controls) SetLatency(operation string, d time.Duration) error {
	return c.plane.SetLatency(c.ws, operation, d)
}

// ForceResponses answers the next count requests of an operation ("*" for
// any) with status, after authentication and the rate limit: any status
// the operation declares in openapi.json (for "*", an error status every
// operation declares), in the spec's error object with the document's
// code for it; another is refused with the list of those it declares. A
// rule of kind status (AddFault) also takes a code and message, a body
// checked against the operation's response, an example, or drift.
func (c Controls) ForceResponses(operation string, status, count int) error {
	return c.plane.ForceResponses(c.ws, operation, status, count)
}

// AddFault injects a fault below a well-formed answer (a reset, a
// truncated or slow body, a latency distribution, an expiring file URL, a
// lost MCP session...) as a rule of the scope: the requests it targets
// meet it, with its probability, until it is deleted or, with First, spent.
// A spec that breaks a rule is refused whole, naming the field.
func (c Controls) AddFault(spec FaultSpec) (FaultRule, error) {
	return c.plane.AddFaultRule(c.ws, spec)
}

// DeleteFault removes a fault rule of the scope.
func (c Controls) DeleteFault(id string) error { return c.plane.DeleteFaultRule(c.ws, id) }

// Faults returns the injected faults of the scope.
func (c Controls) Faults() (Faults, error) { return c.plane.Faults(c.ws) }

// ClearFaults removes the injected faults of the scope (a server's leaves
// its sandboxes' own).
func (c Controls) ClearFaults() error { return c.plane.ClearFaults(c.ws) }

// --- journal and coverage

// Journal returns the recorded requests, newest first.
func (c Controls) Journal(f JournalFilter) []JournalEntry {
	j := c.plane.Journal
	if c.ws != 0 {
		var ok bool
		if j, ok = c.plane.Journals.Of(c.ws); !ok {
			return []JournalEntry{}
		}
	}
	return j.List(f)
}

// JournalSeq is the number of the scope's last recorded request (0 before
// any): pass it as JournalFilter.After to AwaitRequest to wait for what
// comes next.
func (c Controls) JournalSeq() int64 { return c.ring().Seq() }

// AwaitRequest returns the first recorded request of the scope numbered
// after f.After that matches f, as soon as it is journaled (at once if it
// already is), or ctx's error when ctx ends first. A test that expects its
// client to send a request eventually waits here instead of sleeping:
//
//	seq := srv.JournalSeq()
//	client.Start() // sends POST /generations in the background
//	e, err := srv.AwaitRequest(ctx, mediamock.JournalFilter{After: seq, Operation: "createGeneration"})
//
// With journals off (Options.JournalSize < 0) it waits until ctx ends.
func (c Controls) AwaitRequest(ctx context.Context, f JournalFilter) (JournalEntry, error) {
	if e, ok := c.ring().Wait(ctx, f); ok {
		return e, nil
	}
	return JournalEntry{}, ctx.Err()
}

// ring is the journal of the scope, nil when journals are off.
func (c Controls) ring() *journal.Journal { return c.plane.Ring(c.ws) }

// Report grades the clients of the scope from every request it recorded
// of them, whatever the journal's size (GET /_mock/report): how they
// polled their jobs, spent their rate window, repeated paid creations,
// fetched files and wasted requests. failOn names finding ids or
// severities (info, warning, error) that make it Failed.
func (c Controls) Report(failOn ...string) (ClientReport, error) {
	if err := report.ValidFailOn(failOn); err != nil {
		return ClientReport{}, err
	}
	scope := "the server"
	if sb, ok := c.plane.Eng.SandboxOf(c.ws); ok && c.ws != 0 {
		scope = "sandbox " + sb.ID
	}
	return report.Of(c.ring(), 0, scope, c.plane.Eng.Clock().Now(), failOn)
}

// AssertGoodClient fails the test when the scope's report has a finding
// that matches failOn (by default: every warning and error), listing
// them with the fix each needs:
//
//	defer srv.AssertGoodClient(t)
func (c Controls) AssertGoodClient(t TB, failOn ...string) {
	t.Helper()
	if len(failOn) == 0 {
		failOn = []string{"warning", "error"}
	}
	r, err := c.Report(failOn...)
	if err != nil {
		t.Fatalf("client report: %v", err)
		return
	}
	if r.Failed {
		t.Errorf("the client broke rules of good behaviour:\n%s", report.Text(r))
	}
}

// HAR writes the scope's journal to w as an HTTP Archive (HAR 1.2, GET
// /_mock/journal?format=har): every entry it holds, oldest first, with
// headers, bodies, timings and the mock's annotations (_operation,
// _fault, _answerCut, _findings, ...), for DevTools, Charles, Insomnia,
// Postman or k6.
func (c Controls) HAR(w io.Writer) error {
	scope := "the server"
	if sb, ok := c.plane.Eng.SandboxOf(c.ws); ok && c.ws != 0 {
		scope = "sandbox " + sb.ID
	}
	j := c.ring()
	return har.Write(w, j, har.Options{Base: c.url(), Scope: scope, Findings: report.Cited(j, 0)})
}

// ClearJournal forgets every recorded request of the scope.
func (c Controls) ClearJournal() {
	if c.ws == 0 {
		c.plane.Journal.Clear()
	} else if j, ok := c.plane.Journals.Of(c.ws); ok {
		j.Clear()
	}
}

// Coverage reports what the clients exercised: each operation of
// openapi.json with each declared status (and any other status it
// answered), and each lifecycle path of the simulation.
func (c Controls) Coverage() Coverage { return c.plane.CoverageReport(c.ws) }

// ResetCoverage starts counting again.
func (c Controls) ResetCoverage() { c.plane.ResetCoverage(c.ws) }
