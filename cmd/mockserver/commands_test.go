package main

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/mediamock/mediamock/internal/cli"
)

// noEnv is an empty environment.
var noEnv = cli.NoEnv

// The list of commands the reference and the serve command's help show
// (cli.Commands) is the list the errors name, and each of its commands
// runs: a command added to Run and to commands but not to cli.Commands
// fails here, not silently in the reference.
func TestCommandListIsComplete(t *testing.T) {
	var names []string
	for _, c := range cli.Commands()[1:] {
		names = append(names, strings.TrimPrefix(c.Name, "mockserver "))
	}
	slices.Sort(names)
	listed := strings.Split(commands, ", ")
	slices.Sort(listed)
	if !slices.Equal(names, listed) {
		t.Errorf("cli.Commands has %v, the errors name %v", names, listed)
	}
	for _, c := range cli.Commands() {
		if c.Flags == nil {
			continue
		}
		args := append(strings.Fields(strings.TrimPrefix(c.Name, "mockserver")), "--help")
		var out, errs strings.Builder
		if code := Run(context.Background(), args, noEnv, strings.NewReader(""), &out, &errs); code != 0 || errs.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs.String())
		}
		// Every flag of the reference is one the command parses.
		c.Flags().VisitAll(func(f *flag.Flag) {
			if !strings.Contains(out.String(), "-"+f.Name) {
				t.Errorf("%s --help does not show --%s", c.Name, f.Name)
			}
		})
	}
}
