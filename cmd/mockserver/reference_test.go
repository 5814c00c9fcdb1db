package main

import (
	"context"
	"flag"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mediamock/mediamock/internal/refdoc"
)

var updateDocs = flag.Bool("update-docs", false, "write docs/reference/cli.md from the commands' flag sets")

// TestCLIReference holds docs/reference/cli.md to the commands' flag
// sets: a flag, a default or a help text changed without the page fails.
// `go test ./cmd/mockserver -run TestCLIReference -update-docs` rewrites it.
func TestCLIReference(t *testing.T) {
	refdoc.Check(t, "../../docs/reference/cli.md", cliReference(), *updateDocs,
		"go test ./cmd/mockserver -run TestCLIReference -update-docs")
}

// cliReference is the command line reference: every command with its
// flags, each flag's default, help text and variable.
func cliReference() []byte {
	p := refdoc.New("Command line reference", "the flag sets of `cmd/mockserver`",
		"go test ./cmd/mockserver -run TestCLIReference -update-docs")
	p.Para("`mockserver` and its commands, with every flag, its default and the environment variable it reads. " +
		"A flag on the command line wins over its variable; `mockserver COMMAND --help` prints the same.")
	var rows [][]string
	for _, c := range commandList() {
		rows = append(rows, []string{"[`" + c.name + "`](#" + refdoc.Slug(c.name) + ")", c.summary})
	}
	p.Table([]string{"command", "what it does"}, rows)
	for _, c := range commandList() {
		p.Heading(2, c.name)
		p.Code("", strings.TrimSpace(c.name+" "+c.synopsis))
		p.Para(c.about)
		if c.flags == nil {
			p.Para("It takes no flags.")
			continue
		}
		p.Para(c.envDoc)
		rows = nil
		c.flags().VisitAll(func(f *flag.Flag) {
			var env []string
			if c.env != nil {
				for _, v := range strings.Split(c.env(f.Name), ", then ") {
					if v != "" {
						env = append(env, refdoc.Code(v))
					}
				}
			}
			rows = append(rows, []string{refdoc.Code("--" + f.Name), strings.Join(env, ", then "), refdoc.Code(f.DefValue), f.Usage})
		})
		p.Table([]string{"flag", "variable", "default", "what it sets"}, rows)
	}

	// Every variable, for a reader who found one in a configuration.
	p.Heading(2, "Environment variables")
	p.Para("Every variable a flag reads, by name.")
	seen := map[string][]string{}
	for _, c := range commandList() {
		if c.flags == nil || c.env == nil {
			continue
		}
		c.flags().VisitAll(func(f *flag.Flag) {
			for _, v := range strings.Split(c.env(f.Name), ", then ") {
				if v != "" {
					seen[v] = append(seen[v], "[`"+c.name+"`](#"+refdoc.Slug(c.name)+") `--"+f.Name+"`")
				}
			}
		})
	}
	rows = nil
	for _, v := range slices.Sorted(maps.Keys(seen)) {
		rows = append(rows, []string{refdoc.Code(v), strings.Join(seen[v], "<br>")})
	}
	p.Table([]string{"variable", "read by"}, rows)
	return p.Bytes()
}

// The reference's list of commands is the list the errors name, and each
// of its commands runs: a command added to Run and to commands but not to
// commandList fails here, not silently in the reference.
func TestCommandListIsComplete(t *testing.T) {
	var names []string
	for _, c := range commandList()[1:] {
		names = append(names, strings.TrimPrefix(c.name, "mockserver "))
	}
	slices.Sort(names)
	listed := strings.Split(commands, ", ")
	slices.Sort(listed)
	if !slices.Equal(names, listed) {
		t.Errorf("commandList has %v, the errors name %v", names, listed)
	}
	for _, c := range commandList() {
		if c.flags == nil {
			continue
		}
		args := append(strings.Fields(strings.TrimPrefix(c.name, "mockserver")), "--help")
		var out, errs strings.Builder
		if code := Run(context.Background(), args, noEnv, strings.NewReader(""), &out, &errs); code != 0 || errs.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs.String())
		}
		// Every flag of the reference is one the command parses.
		c.flags().VisitAll(func(f *flag.Flag) {
			if !strings.Contains(out.String(), "-"+f.Name) {
				t.Errorf("%s --help does not show --%s", c.name, f.Name)
			}
		})
	}
}
