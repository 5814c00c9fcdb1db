package specdiff

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// UsedText is how the text table shows a use: "yes 5/7" (5 of the 7
// recorded exchanges that tell touched the changed element), "yes" (the
// operation was called; the traffic does not tell about the element),
// "no 0/7" (called, the element never touched), "no" (never called).
func (u Use) UsedText() string {
	switch {
	case u.Known && u.Sample > 0:
		yes := "no"
		if u.Used {
			yes = "yes"
		}
		return fmt.Sprintf("%s %d/%d", yes, u.Hits, u.Sample)
	case u.Used:
		return "yes"
	}
	return "no"
}

// WriteText writes the report as a table, one change a line, with a
// summary line above it.
func (r *Report) WriteText(w io.Writer) error {
	s := r.Summary
	fmt.Fprintf(w, "%s against %s: %d %s (%d breaking, %d warning, %d info)", r.Base, r.Revision,
		s.Changes, plural(s.Changes, "change", "changes"), s.Breaking, s.Warning, s.Info)
	if len(r.Traffic.Sources) > 0 {
		fmt.Fprintf(w, "; traffic (%s): %d %s of %d %s, %d %s used (%d breaking)", strings.Join(r.Traffic.Sources, ", "),
			r.Traffic.Calls, plural(r.Traffic.Calls, "call", "calls"), r.Traffic.Operations, plural(r.Traffic.Operations, "operation", "operations"),
			s.Used, plural(s.Used, "change", "changes"), s.UsedBreaking)
	} else {
		fmt.Fprint(w, "; no traffic given (--coverage, --journal): ranked by severity")
	}
	fmt.Fprintln(w)
	if len(r.Changes) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tSEVERITY\tUSED\tCALLS\tOPERATION\tCHANGE\tMESSAGE")
	for _, c := range r.Changes {
		op := strings.TrimSpace(c.Method + " " + c.Path)
		if c.OperationID != "" {
			op += " (" + c.OperationID + ")"
		}
		msg := c.Message
		if c.Use.Element != "" {
			msg += " [used: " + c.Use.Element + "]"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", c.Rank, c.Severity, c.Use.UsedText(), c.Use.Calls, op, c.ID, msg)
	}
	return tw.Flush()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
