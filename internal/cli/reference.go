package cli

import (
	"flag"
	"maps"
	"slices"
	"strings"

	"github.com/mediamock/mediamock/internal/refdoc"
)

// Reference is the command line reference, docs/reference/cli.md: every
// command with its flags, each flag's default, help text and variable,
// then every variable by name.
func Reference() []byte {
	p := refdoc.New("Command line reference", "the flag sets of `cmd/mockserver` (`internal/cli`)", refdoc.Command)
	p.Para("`mockserver` and its commands, with every flag, its default and the environment variable it reads. " +
		"A flag on the command line wins over its variable; `mockserver COMMAND --help` prints the same.")
	var rows [][]string
	for _, c := range Commands() {
		rows = append(rows, []string{"[`" + c.Name + "`](#" + refdoc.Slug(c.Name) + ")", c.Summary})
	}
	p.Table([]string{"command", "what it does"}, rows)
	for _, c := range Commands() {
		p.Heading(2, c.Name)
		p.Code("", strings.TrimSpace(c.Name+" "+c.Synopsis))
		p.Para(c.About)
		if c.Flags == nil {
			p.Para("It takes no flags.")
			continue
		}
		p.Para(c.EnvDoc)
		rows = nil
		c.Flags().VisitAll(func(f *flag.Flag) {
			var env []string
			if c.Env != nil {
				for _, v := range strings.Split(c.Env(f.Name), ", then ") {
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
	for _, c := range Commands() {
		if c.Flags == nil || c.Env == nil {
			continue
		}
		c.Flags().VisitAll(func(f *flag.Flag) {
			for _, v := range strings.Split(c.Env(f.Name), ", then ") {
				if v != "" {
					seen[v] = append(seen[v], "[`"+c.Name+"`](#"+refdoc.Slug(c.Name)+") `--"+f.Name+"`")
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
