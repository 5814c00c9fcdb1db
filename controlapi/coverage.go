package controlapi

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Coverage reports what the clients exercised, as GET /_mock/coverage
// shows it: each operation of openapi.json with each declared status (and
// any other status it answered), each lifecycle path of the simulation and
// each kind of fault the clients met.
type Coverage struct {
	// Operations are every operation of openapi.json, in its order.
	Operations []OperationCoverage `json:"operations"`
	// Lifecycle counts how often each path of the simulation was taken:
	// generation_completed, generation_failed_refunded, ...
	Lifecycle map[string]int `json:"lifecycle"`
	// FailurePaths list every kind of fault that strikes requests: how
	// often the clients met it, and what they did next.
	FailurePaths []FailurePath `json:"failure_paths"`
	// Summary totals the report.
	Summary CoverageSummary `json:"summary"`
}

// OperationCoverage is one operation's answers.
type OperationCoverage struct {
	// Operation is the operationId.
	Operation string `json:"operation"`
	// Method is the operation's HTTP method.
	Method string `json:"method"`
	// Path is the operation's path template.
	Path string `json:"path"`
	// Statuses are the declared statuses and those answered, by status.
	Statuses []StatusCoverage `json:"statuses"`
	// Fronts counts the calls per front (rest, mcp).
	Fronts map[string]int `json:"fronts,omitempty"`
}

// StatusCoverage is how often an operation answered a status, and whether
// openapi.json declares it.
type StatusCoverage struct {
	// Status is the HTTP status.
	Status int `json:"status"`
	// Count is how often the operation answered it.
	Count int `json:"count"`
	// Declared says openapi.json declares it for the operation.
	Declared bool `json:"declared"`
}

// FailurePath is how often the clients met a kind of fault, and what their
// next request was.
type FailurePath struct {
	// Kind is the fault kind.
	Kind string `json:"kind"`
	// Met counts the exchanges that met it.
	Met int `json:"met"`
	// Next counts what the client's next request did: retried,
	// resumed_with_range, reread, reinitialized, resumed_stream or other.
	Next map[string]int `json:"next"`
}

// CoverageSummary totals a coverage report.
type CoverageSummary struct {
	// OperationsExercised counts the operations that answered at least once.
	OperationsExercised int `json:"operations_exercised"`
	// Operations counts the operations.
	Operations int `json:"operations"`
	// StatusesExercised counts the declared statuses answered at least once.
	StatusesExercised int `json:"statuses_exercised"`
	// StatusesDeclared counts the declared statuses.
	StatusesDeclared int `json:"statuses_declared"`
	// LifecycleTaken counts the lifecycle paths taken at least once.
	LifecycleTaken int `json:"lifecycle_paths_taken"`
	// LifecyclePaths counts the lifecycle paths.
	LifecyclePaths int `json:"lifecycle_paths"`
	// FaultKindsMet counts the fault kinds the clients met.
	FaultKindsMet int `json:"fault_kinds_met"`
	// FaultKinds counts the fault kinds of FailurePaths.
	FaultKinds int `json:"fault_kinds"`
}

// WriteTable prints the report as a table: every operation with the
// statuses it answered and those it never did, then the lifecycle paths
// by name, then the failure paths.
func (c Coverage) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "OPERATION\tMETHOD PATH\tEXERCISED\tNEVER EXERCISED\tFRONTS\n")
	for _, oc := range c.Operations {
		var hit, miss []string
		for _, sc := range oc.Statuses {
			switch {
			case sc.Count > 0:
				hit = append(hit, fmt.Sprintf("%d×%d", sc.Status, sc.Count))
			case sc.Declared:
				miss = append(miss, strconv.Itoa(sc.Status))
			}
		}
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t%s\n", oc.Operation, oc.Method, oc.Path, dash(hit), dash(miss), counts(oc.Fronts))
	}
	fmt.Fprintf(tw, "\nLIFECYCLE PATH\tTIMES\t\t\t\n")
	for _, p := range slices.Sorted(maps.Keys(c.Lifecycle)) {
		fmt.Fprintf(tw, "%s\t%d\t\t\t\n", p, c.Lifecycle[p])
	}
	fmt.Fprintf(tw, "\nFAILURE PATH\tMET\tTHEN\t\t\n")
	for _, f := range c.FailurePaths {
		fmt.Fprintf(tw, "%s\t%d\t%s\t\t\n", f.Kind, f.Met, counts(f.Next))
	}
	fmt.Fprintf(tw, "\noperations exercised %d/%d, declared statuses %d/%d, lifecycle paths %d/%d, fault kinds met %d/%d\n",
		c.Summary.OperationsExercised, c.Summary.Operations, c.Summary.StatusesExercised, c.Summary.StatusesDeclared,
		c.Summary.LifecycleTaken, c.Summary.LifecyclePaths, c.Summary.FaultKindsMet, c.Summary.FaultKinds)
	return tw.Flush()
}

// counts writes a count per name, by name: "mcp×2 rest×5", or "-".
func counts(m map[string]int) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return dash(out)
}

func dash(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return strings.Join(xs, " ")
}
