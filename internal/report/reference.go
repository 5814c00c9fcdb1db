package report

import "github.com/mediamock/mediamock/internal/refdoc"

// Reference is the reference of the client findings,
// docs/reference/client-findings.md: every rule, in the order the report
// lists them, with what it means and how to fix it.
func Reference() []byte {
	p := refdoc.New("Client findings", "the rules of `internal/report`", refdoc.Command)
	p.Para("What the client report (`GET /_mock/report`, `mockserver report`, `AssertGoodClient`) can find, in the order it lists them. " +
		"An id never changes meaning: fail a CI job on it with `fail_on` (`?fail_on=retry-after-ignored,error`, `mockserver report --fail-on error`). " +
		"Whether a read saw a job done is decided on the mock's clock, so a run gives the same report on every clock mode; " +
		"the report covers what the journal still holds (`summary.dropped` counts the rest: raise `--journal-size` for long runs).")
	rows := [][]string{}
	for _, r := range Rules {
		rows = append(rows, []string{"`" + r.ID + "`", r.Severity, r.Title})
	}
	p.Table([]string{"id", "severity", "title"}, rows)
	for _, r := range Rules {
		p.Heading(2, r.ID)
		p.Para("**" + r.Title + "** (" + r.Severity + "). " + r.Means)
		p.Para("Fix: " + r.Fix)
	}
	return p.Bytes()
}
