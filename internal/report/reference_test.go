package report

import (
	"flag"
	"testing"

	"github.com/mediamock/mediamock/internal/refdoc"
)

var updateDocs = flag.Bool("update-docs", false, "write docs/reference/client-findings.md from the rules")

// TestClientFindingsReference holds docs/reference/client-findings.md to
// the report's rules: a rule added or changed without the page fails. `go
// test ./internal/report -run TestClientFindingsReference -update-docs`
// rewrites it.
func TestClientFindingsReference(t *testing.T) {
	const command = "go test ./internal/report -run TestClientFindingsReference -update-docs"
	p := refdoc.New("Client findings", "the rules of `internal/report`", command)
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
	refdoc.Check(t, "../../docs/reference/client-findings.md", p.Bytes(), *updateDocs, command)
}
