package report

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/mediamock/mediamock/controlapi"
)

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
