package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/check"
)

// RuleSummary is one rule's line of the summary.
type RuleSummary struct {
	Rule    string `json:"rule"`
	Summary string `json:"summary"`
	// Source is whose the rule is (an openapi.* finding is labelled by
	// where it is; see check.Rule).
	check.Source
	Applied    int `json:"applied"`
	Violations int `json:"violations"`
}

// DriftKind is how much drift of one kind the proxy saw.
type DriftKind struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Summary is what the proxy has seen so far.
type Summary struct {
	Upstream string `json:"upstream"`
	// Exchanges of the API checked, and of them those with violations and
	// those not fully checked.
	Exchanges      int `json:"exchanges"`
	WithViolations int `json:"exchanges_with_violations"`
	Skipped        int `json:"exchanges_skipped"`
	Violations     int `json:"violations"`
	// Drift is what answers carried that openapi.json does not declare, in
	// how many exchanges, by kind, and by operation and path (every array
	// index written [*]) with how often.
	WithDrift    int               `json:"exchanges_with_drift"`
	Drift        int               `json:"drift"`
	DriftByKind  []DriftKind       `json:"drift_by_kind"`
	DriftByPlace []check.DriftSeen `json:"drift_by_place"`
	// Others are requests outside the API (files), passed through unchecked.
	Others int `json:"others"`
	// UpstreamErrors are requests the proxy answered itself: the upstream
	// could not be reached.
	UpstreamErrors int           `json:"upstream_errors"`
	Rules          []RuleSummary `json:"rules"`
}

// Summary is the rule-by-rule count of what the proxy has seen.
func (p *Proxy) Summary() Summary {
	stats := p.checker.Stats()
	p.mu.Lock()
	s := Summary{Upstream: p.root.String(), Exchanges: p.exchanges, WithViolations: p.withViol, WithDrift: p.withDrift, Skipped: p.skipped,
		Others: p.others, UpstreamErrors: p.upstream}
	p.mu.Unlock()
	for _, r := range check.Rules {
		st := stats[r.ID]
		s.Violations += st.Violations
		s.Rules = append(s.Rules, RuleSummary{Rule: r.ID, Summary: r.Summary, Source: r.Source, Applied: st.Applied, Violations: st.Violations})
	}
	s.DriftByPlace = p.checker.DriftStats()
	for _, kind := range check.DriftKinds {
		n := 0
		for _, d := range s.DriftByPlace {
			if d.Kind == kind {
				n += d.Count
			}
		}
		s.Drift += n
		s.DriftByKind = append(s.DriftByKind, DriftKind{Kind: kind, Count: n})
	}
	return s
}

// The severities Failure takes: a violation, or drift or worse.
const (
	FailOnViolation = "violation"
	FailOnDrift     = "drift"
)

// Failure says why a run that fails on a severity (FailOnViolation or
// FailOnDrift, which includes violations) has failed, or "" when it has
// not, or when on is "".
func (s Summary) Failure(on string) string {
	switch {
	case on == "":
		return ""
	case s.Violations > 0:
		return fmt.Sprintf("%d violations in %d exchanges", s.Violations, s.WithViolations)
	case on == FailOnDrift && s.Drift > 0:
		return fmt.Sprintf("%d drift findings in %d exchanges", s.Drift, s.WithDrift)
	}
	return ""
}

// WriteSummary writes the summary as a table: rule, exchanges it applied
// to, violations.
func (p *Proxy) WriteSummary(w io.Writer) {
	s := p.Summary()
	fmt.Fprintf(w, "proxy summary: %d exchanges with %s checked, %d with violations (%d violations), %d with drift (%d drift), %d not fully checked, %d passed through outside the API, %d upstream errors\n",
		s.Exchanges, s.Upstream, s.WithViolations, s.Violations, s.WithDrift, s.Drift, s.Skipped, s.Others, s.UpstreamErrors)
	fmt.Fprintf(w, "%-22s %8s %10s  %s\n", "rule", "applied", "violations", "label")
	for _, r := range s.Rules {
		fmt.Fprintf(w, "%-22s %8d %10d  %s\n", r.Rule, r.Applied, r.Violations, r.Source)
	}
	if s.Drift == 0 {
		fmt.Fprintf(w, "drift: none\n")
		return
	}
	var kinds []string
	for _, k := range s.DriftByKind {
		kinds = append(kinds, fmt.Sprintf("%d %s", k.Count, k.Kind))
	}
	fmt.Fprintf(w, "drift: %s\n", strings.Join(kinds, ", "))
	fmt.Fprintf(w, "%-7s %6s  %-24s %-32s %s\n", "kind", "count", "operation", "path", "label")
	for _, d := range s.DriftByPlace {
		fmt.Fprintf(w, "%-7s %6d  %-24s %-32s %s\n", d.Kind, d.Count, d.Operation, d.Path, d.Source)
	}
}

func (p *Proxy) serveReport(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed on "+ReportPath+"; allowed: GET.")
		return
	}
	b, _ := json.MarshalIndent(p.Summary(), "", "  ")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.Write(append(b, '\n'))
}
