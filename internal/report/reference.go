package report

import (
	"strings"

	"github.com/mediamock/mediamock/internal/refdoc"
)

// ReferenceClient is a client of the service the report is held to: what
// it does, and exactly the findings its report gives (in the report's
// order). internal/report's tests run each one twice, on servers of their
// own, and hold both reports to these findings and to each other, byte
// for byte.
type ReferenceClient struct {
	Name, Does string
	Findings   []string
}

// ReferenceClients are the report's reference clients.
var ReferenceClients = []ReferenceClient{
	{"naive", "On the free plan (20 requests a minute): creates a generation, polls it every 100 ms without `wait_seconds`, " +
		"goes on at once after each 429, and reads the job once more after it is done.",
		[]string{"poll-without-wait", "late-notice", "rate-limited", "retry-after-ignored", "no-backoff", "poll-after-terminal"}},
	{"good", "Creates with `wait_seconds` and long-polls with it, waits the `Retry-After` of a 429, resumes a download cut short with `Range`, " +
		"and reads the asset again for a fresh address when one has expired.", nil},
	{"duplicating", "Its creation's answer is lost to a reset: it sends the same creation again (then behaves well).",
		[]string{"duplicate-creation"}},
	{"recovering", "Its creation's answer is lost to a reset: it finds the job in the library, newest first (the report's fix), " +
		"then reads the job once more although the library showed it done.",
		[]string{"poll-after-terminal"}},
	{"throttled-and-polling", "On the free plan: polls every 100 ms (10 requests a second) without `wait_seconds`, " +
		"and waits the `Retry-After` of each 429 before it polls again: it is told to long-poll, not to poll more often.",
		[]string{"poll-without-wait", "late-notice", "rate-limited"}},
	{"retry-after-ignoring", "Long-polls with `wait_seconds`, but after a 429 (three are forced) sends the read again every 100 ms.",
		[]string{"rate-limited", "retry-after-ignored", "no-backoff"}},
	{"stateless-mcp", "Speaks MCP's sessionless revision (2026-07-28) over HTTP: creates a generation with `create_generation` " +
		"and long-polls it with `get_generation` and `wait_seconds`, one tool call a request, no `initialize`.", nil},
}

// Reference is the reference of the client findings,
// docs/reference/client-findings.md: every rule, in the order the report
// lists them, with what it means and how to fix it, and the reference
// clients the report is held to.
func Reference() []byte {
	p := refdoc.New("Client findings", "the rules of `internal/report`", refdoc.Command)
	p.Para("What the client report (`GET /_mock/report`, `mockserver report`, `AssertGoodClient`) can find, in the order it lists them. " +
		"An id never changes meaning: fail a CI job on it with `fail_on` (`?fail_on=retry-after-ignored,error`, `mockserver report --fail-on error`). " +
		"Whether a read saw a job done is decided on the mock's clock, so a run gives the same report on every clock mode. " +
		"The report is kept as each request is recorded, for every request of its scope whatever the journal's size: " +
		"the journal only limits which requests a finding can cite (`seqs`, `request_ids`); `examples_dropped` counts the others.")
	rows := [][]string{}
	for _, r := range Rules {
		rows = append(rows, []string{"`" + r.ID + "`", r.Severity, r.Title})
	}
	p.Table([]string{"id", "severity", "title"}, rows)
	for _, r := range Rules {
		p.Heading(2, r.ID)
		p.Para("**" + r.Title + "** (" + r.Severity + "). " + r.Means)
		p.Para("Fix: " + r.Fix)
		for _, f := range r.Fits {
			p.Para("When " + f.When + ": " + f.Fix)
		}
	}
	p.Heading(2, "Reference clients")
	p.Para("The report is held to these clients (`internal/report`'s tests run each twice, on servers of their own, " +
		"and require exactly these findings and the same bytes both times).")
	rows = [][]string{}
	for _, c := range ReferenceClients {
		found := "none"
		if len(c.Findings) > 0 {
			found = "`" + strings.Join(c.Findings, "`, `") + "`"
		}
		rows = append(rows, []string{c.Name, c.Does, found})
	}
	p.Table([]string{"client", "what it does", "findings"}, rows)
	return p.Bytes()
}
