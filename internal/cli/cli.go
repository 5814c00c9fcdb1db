// Package cli is mockserver's command line as data: its commands, each
// command's flag set (the settings it parses into, each flag's default and
// help), the environment variable of each flag, and the help text. The
// command (cmd/mockserver) parses and runs them; the generator writes the
// command line reference (docs/reference/cli.md) from them, so that the
// page, --help and the parser read one definition:
//
//	s, fs := cli.ServeFlags(false)
//	err := fs.Parse(args) // s.Addr, s.DB, ... are set
//
// A flag set is made fresh on each call and parses nothing by itself;
// applying the environment and checking values is the command's part.
package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// A Command is one of mockserver's commands, as the serve command's help
// and the command line reference (docs/reference/cli.md) show it.
type Command struct {
	Name     string // as typed: "mockserver proxy"
	Synopsis string // the arguments of its usage line: "--upstream URL"
	Summary  string // a line, for the list of commands
	About    string // what it does, a paragraph (its --help's)
	// Flags makes its flag set, without parsing anything; nil: it takes
	// none.
	Flags func() *flag.FlagSet
	// Env names the environment variable a flag reads, "" for none.
	Env func(flagName string) string
	// EnvDoc says how the flags read the environment, in Markdown (the
	// reference's alone).
	EnvDoc string
}

// The paragraphs of the commands' help.
const (
	serveAbout = `A stateful simulator of the media generation service's REST API v1, its MCP server,
a control API under /_mock and a dashboard at /_mock/ui/.`
	mcpAbout = `An MCP server over stdio: a simulation of its own, or with --url a bridge to a running server.
With --control it is the control MCP server (the control API as tools) instead of the service's.`
	conformanceAbout = `Runs the conformance suite against a server of the API (the real service, a staging
build, this mock), prints the table of rules and checks, and writes JSON and JUnit XML
reports. Exit 0 when nothing failed, 1 when a rule or check failed, 2 on a usage error.`
	specdiffAbout = `Lists what changes between the embedded openapi.json and another document, each change
ranked by whether the client's recorded traffic touched it, then by severity.
Exit 1 when --fail-on finds what it looks for, 2 for a bad command line or input.`
)

// NoEnv is an empty environment: the flag sets' defaults as documented.
func NoEnv(string) string { return "" }

// EnvName is the environment variable of a flag of the serve (and mcp)
// command: --public-url is MOCKSERVER_PUBLIC_URL.
func EnvName(flagName string) string {
	return "MOCKSERVER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Commands is every command, the serve command first. A function, not
// a variable: the serve command's help lists the commands.
func Commands() []Command {
	return []Command{
		{Name: "mockserver", Synopsis: "[flags]", Summary: "the simulator (the default command)", About: serveAbout,
			Flags: func() *flag.FlagSet { _, fs := ServeFlags(false); return fs }, Env: EnvName,
			EnvDoc: "Each flag is also an environment variable; a flag wins over its variable."},
		{Name: "mockserver mcp", Synopsis: "--api-key KEY | --control [flags]", Summary: "an MCP server over stdio", About: mcpAbout + `
It takes the serve command's flags and variables, with a free loopback port and a temporary
state file by default. Stdout carries only protocol messages; the log goes to stderr.`,
			Flags: func() *flag.FlagSet { _, fs := ServeFlags(true); return fs }, Env: EnvName,
			EnvDoc: "Each flag is also an environment variable, the serve command's; a flag wins over its variable."},
		{Name: "mockserver keys", Synopsis: "[--fixtures F]", Summary: "the test API keys of the fixtures",
			About: "Prints the test credentials of the fixtures, one a line: token, type, workspace, plan and scopes.",
			Flags: func() *flag.FlagSet { _, _, fs := KeysFlags(NoEnv); return fs },
			Env: func(f string) string {
				if f == "fixtures" {
					return EnvName(f)
				}
				return ""
			},
			EnvDoc: "`--fixtures` defaults to the server's `" + EnvName("fixtures") + "`."},
		{Name: "mockserver proxy", Synopsis: "--upstream URL", Summary: "a validating proxy in front of a server of the API",
			About: `A validating reverse proxy in front of any server of the API: every exchange is checked
against openapi.json, and the findings are reported (and, with --record, the account, models
and completed assets are recorded as a fixture, and the timing of the jobs created through it).`,
			Flags: func() *flag.FlagSet { _, fs := ProxyFlags(); return fs }, Env: ProxyEnvName,
			EnvDoc: "Each flag is also an environment variable with a prefix of its own, `MOCKSERVER_PROXY_`, so that a proxy and a server configured in one environment do not take each other's `" + EnvName("addr") + "`; a flag wins over its variable."},
		{Name: "mockserver fixtures timing", Synopsis: "--recording DIR [--write F]", Summary: "the timing of each model a recording learned, as fixture timing",
			About: timingAbout, Flags: func() *flag.FlagSet { _, fs := TimingFlags(); return fs }},
		{Name: "mockserver conformance", Synopsis: "--url URL", Summary: "the conformance suite against a server of the API",
			About: conformanceAbout, Flags: func() *flag.FlagSet { _, fs := ConformanceFlags(); return fs },
			Env: func(f string) string {
				v := ConformanceEnvName(f)
				if older, ok := ConformanceFallback[f]; ok {
					v += ", then " + older
				}
				return v
			},
			EnvDoc: "Each flag is also an environment variable; a flag wins over its variable. The url, the keys and spending also read the Go conformance test's variables, after the command's own. Give keys in the environment: a flag's value is visible to every user of the machine."},
		{Name: "mockserver report", Synopsis: "[--url URL] [--fail-on IDS]", Summary: "the client report of a running server, for CI",
			About: reportAbout, Flags: func() *flag.FlagSet { _, fs := ReportFlags(); return fs }, Env: ReportEnvName,
			EnvDoc: "Each flag is also an environment variable: the server's own for `--url`, `--control-token` and `--db`, `MOCKSERVER_REPORT_<NAME>` for the others; a flag wins over its variable."},
		{Name: "mockserver spec-diff", Synopsis: "--against F|URL", Summary: "what changed from openapi.json, what your traffic used first",
			About: specdiffAbout, Flags: func() *flag.FlagSet { _, fs := SpecDiffFlags(); return fs }, Env: SpecDiffEnvName,
			EnvDoc: "Each flag is also an environment variable; a flag wins over its variable."},
		{Name: "mockserver health", Synopsis: "[--url URL]", Summary: "exit 0 when a server answers healthy",
			About: `Asks a running server whether it is healthy: exit 0 when it answers 200 on /_mock/health,
1 otherwise. It needs no shell or curl, so a minimal container image can use it as its HEALTHCHECK.`,
			Flags: func() *flag.FlagSet { _, fs := HealthFlags(NoEnv); return fs },
			Env: func(f string) string {
				switch f {
				case "url":
					return EnvName("addr")
				case "db":
					return EnvName("db")
				}
				return ""
			},
			EnvDoc: "The flags read the server's variables: without `--url`, the address is `" + EnvName("addr") + "` when set (https when `" + EnvName("tls") + "` or `" + EnvName("tls-cert") + "` is), else the address the server wrote beside its state file; `--db` defaults to `" + EnvName("db") + "`."},
		{Name: "mockserver help", Synopsis: "[command]", Summary: "the help of a command (its --help)",
			About: `Prints the help of a command, as its --help does: mockserver help proxy is mockserver
proxy --help; mockserver help alone is mockserver --help.`},
		{Name: "mockserver version", Summary: "the version (also mockserver --version, -v)",
			About: `Prints the version: the one stamped at build time (-ldflags "-X main.version=1.2.3"),
else the module's (a tagged version, or dev- and the commit of a checkout).
mockserver --version and mockserver -v print the same.`},
	}
}

// usageCommands lists the commands, for the serve command's help.
func usageCommands(w io.Writer) {
	for i, c := range Commands() {
		line := c.Name + " " + c.Synopsis
		if i == 0 {
			fmt.Fprintf(w, "Usage: %s\n", line)
			continue
		}
		fmt.Fprintf(w, "       %-38s %s\n", line, c.Summary)
	}
}

// printFlags lists a command's flags for its --help: each with its
// environment variable, its help and its default (a zero one is not
// said), the names padded to width.
func printFlags(w io.Writer, fs *flag.FlagSet, env func(string) string, width int) {
	fs.VisitAll(func(f *flag.Flag) {
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			def = " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "  --%-*s %s\n      %s%s\n", width, f.Name, env(f.Name), f.Usage, def)
	})
}
