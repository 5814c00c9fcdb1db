// Command dockerfile-check parses a Dockerfile with BuildKit's own parser
// (the one `docker build` uses), fails on its parse-time warnings and lint
// rules, and prints the instructions in a normalized form, one a line,
// prefixed by their stage, for scripts/container-check to compare:
//
//	meta ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
//	build FROM docker.io/library/golang:1.26-bookworm
//	build RUN CGO_ENABLED=0 go build ...
//	final ENTRYPOINT ["/mockserver"]
//
// FROM lines have the global ARGs' defaults substituted; other instructions
// are printed as written. The last stage is called "final" when it has no
// name. Exit status: 0 clean, 1 warnings or errors, 2 bad usage.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dockerfile-check DOCKERFILE")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1]))
}

func run(path string) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		return 1
	}
	problems := 0
	for _, w := range res.Warnings {
		line := 0
		if w.Location != nil {
			line = w.Location.Start.Line
		}
		fmt.Fprintf(os.Stderr, "%s:%d: %s\n", path, line, w.Short)
		problems++
	}
	lint := linter.New(&linter.Config{Warn: func(rule, _, _, msg string, loc []parser.Range) {
		line := 0
		if len(loc) > 0 {
			line = loc[0].Start.Line
		}
		fmt.Fprintf(os.Stderr, "%s:%d: %s: %s\n", path, line, rule, msg)
		problems++
	}})
	stages, metaArgs, err := instructions.Parse(res.AST, lint)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		return 1
	}
	defaults := map[string]string{}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			v := ""
			if kv.Value != nil {
				v = *kv.Value
			}
			defaults[kv.Key] = v
			fmt.Printf("meta ARG %s\n", kv.String())
		}
	}
	for i, s := range stages {
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("stage%d", i)
			if i == len(stages)-1 {
				name = "final"
			}
		}
		from := os.Expand(s.BaseName, func(k string) string { return defaults[k] })
		if s.Platform != "" {
			from = "--platform=" + s.Platform + " " + from
		}
		fmt.Printf("%s FROM %s\n", name, from)
		for _, c := range s.Commands {
			for _, l := range describe(c) {
				fmt.Printf("%s %s\n", name, l)
			}
		}
	}
	if problems > 0 {
		return 1
	}
	return 0
}

// describe gives the normalized lines of one instruction.
func describe(c instructions.Command) []string {
	kw := strings.ToUpper(c.Name())
	switch c := c.(type) {
	case *instructions.ArgCommand:
		var out []string
		for _, kv := range c.Args {
			out = append(out, kw+" "+kv.String())
		}
		return out
	case *instructions.EnvCommand:
		return pairs(kw, c.Env)
	case *instructions.LabelCommand:
		return pairs(kw, c.Labels)
	case *instructions.CopyCommand:
		opts := ""
		if c.From != "" {
			opts += " --from=" + c.From
		}
		if c.Chown != "" {
			opts += " --chown=" + c.Chown
		}
		if c.Chmod != "" {
			opts += " --chmod=" + c.Chmod
		}
		return []string{kw + opts + " " + strings.Join(append(append([]string{}, c.SourcePaths...), c.DestPath), " ")}
	case *instructions.RunCommand:
		return []string{kw + " " + cmdLine(c.ShellDependantCmdLine)}
	case *instructions.CmdCommand:
		return []string{kw + " " + cmdLine(c.ShellDependantCmdLine)}
	case *instructions.EntrypointCommand:
		return []string{kw + " " + cmdLine(c.ShellDependantCmdLine)}
	case *instructions.HealthCheckCommand:
		h := c.Health
		return []string{fmt.Sprintf("%s %s interval=%s timeout=%s start-period=%s retries=%d", kw, jsonOf(h.Test), h.Interval, h.Timeout, h.StartPeriod, h.Retries)}
	case *instructions.ExposeCommand:
		return []string{kw + " " + strings.Join(c.Ports, " ")}
	case *instructions.VolumeCommand:
		return []string{kw + " " + strings.Join(c.Volumes, " ")}
	case *instructions.UserCommand:
		return []string{kw + " " + c.User}
	case *instructions.WorkdirCommand:
		return []string{kw + " " + c.Path}
	case *instructions.ShellCommand:
		return []string{kw + " " + jsonOf(c.Shell)}
	}
	return []string{kw}
}

func pairs(kw string, kvs instructions.KeyValuePairs) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, kw+" "+kv.Key+"="+kv.Value)
	}
	return out
}

// cmdLine is the exec form as JSON, or the shell form as written.
func cmdLine(c instructions.ShellDependantCmdLine) string {
	if c.PrependShell {
		return strings.Join(c.CmdLine, " ")
	}
	return jsonOf(c.CmdLine)
}

func jsonOf(v []string) string {
	b, _ := json.Marshal(v)
	return string(b)
}
