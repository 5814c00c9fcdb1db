package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/controlapi"
)

// Text is the report as a person reads it in a terminal.
func Text(r Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Client report for %s: %s", r.Scope, counted(r.Summary.Requests, "request", "requests"))
	if r.Summary.Dropped > 0 {
		fmt.Fprintf(&b, " (the journal no longer holds %s: the report counts %s, but cannot cite %s)",
			counted(int(r.Summary.Dropped), "older one", "older ones"), plural(int(r.Summary.Dropped), "it", "them"),
			plural(int(r.Summary.Dropped), "it", "them"))
	}
	fmt.Fprintf(&b, ", %s, %s rate limited, %.0f%% of requests read jobs.\n", counted(r.Summary.Jobs, "job", "jobs"),
		grouped(r.Summary.RateLimited), 100*r.Summary.ReadShare)
	var busiest *controlapi.ClientMinute
	for i, m := range r.Summary.Minutes {
		if busiest == nil || m.Requests > busiest.Requests {
			busiest = &r.Summary.Minutes[i]
		}
	}
	if busiest != nil {
		fmt.Fprintf(&b, "Busiest minute: %s (%s, %s rate limited) of workspace %d from %s.\n",
			counted(busiest.Requests, "request", "requests"), counted(busiest.Reads, "read of a job", "reads of jobs"),
			grouped(busiest.RateLimited), busiest.WorkspaceID, busiest.Start.Format(time.RFC3339))
	}
	if len(r.Findings) == 0 {
		b.WriteString("No findings: the client behaved well.\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n%-7s %s (%d): %s\n  %s\n  Fix: %s\n", strings.ToUpper(f.Severity), f.ID, f.Count, f.Title, f.Detail, f.Fix)
		if len(f.Seqs) > 0 {
			fmt.Fprintf(&b, "  Requests (journal seq): %s\n", seqList(f.Seqs))
		}
		if f.ExamplesDropped > 0 {
			fmt.Fprintf(&b, "  %s no longer in the journal.\n", counted(f.ExamplesDropped, "example request is", "example requests are"))
		}
	}
	if len(r.Jobs) > 0 {
		b.WriteString("\nJobs:\n")
		for _, j := range r.Jobs {
			lag := "not seen done"
			if j.LagSeconds != nil {
				lag = fmt.Sprintf("seen done %.1f s after it finished", *j.LagSeconds)
			}
			fmt.Fprintf(&b, "  %s %d (workspace %d, %s): %s, %s after done, wait_seconds %v, %s\n",
				j.Kind, j.ID, j.WorkspaceID, j.Status, counted(j.Reads, "read", "reads"), grouped(j.ReadsAfter), j.Waited, lag)
		}
	}
	if r.Failed {
		fmt.Fprintf(&b, "\nFAILED: a finding matches --fail-on %s\n", strings.Join(r.FailOn, ","))
	}
	return b.Bytes()
}

// seqList writes journal numbers apart by spaces.
func seqList(seqs []int64) string {
	var b []byte
	for i, s := range seqs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, s, 10)
	}
	return string(b)
}
