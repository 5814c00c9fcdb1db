package main

import (
	"flag"
	"fmt"
	"io"
)

// A command is one of mockserver's commands, as the serve command's help
// and the command line reference (docs/reference/cli.md) show it.
type command struct {
	name     string // as typed: "mockserver proxy"
	synopsis string // the arguments of its usage line: "--upstream URL"
	summary  string // a line, for the list of commands
	about    string // what it does, a paragraph (its --help's)
	// flags makes its flag set, without parsing anything; nil: it takes
	// none.
	flags func() *flag.FlagSet
	// env names the environment variable a flag reads, "" for none.
	env func(flagName string) string
	// envDoc says how the flags read the environment, in Markdown (the
	// reference's alone).
	envDoc string
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

// noEnv is an empty environment: the flag sets' defaults as documented.
func noEnv(string) string { return "" }

// commandList is every command, the serve command first. A function, not
// a variable: the serve command's help lists the commands.
func commandList() []command {
	return []command{
		{name: "mockserver", synopsis: "[flags]", summary: "the simulator (the default command)", about: serveAbout,
			flags: func() *flag.FlagSet { _, fs := serveFlags(false); return fs }, env: envName,
			envDoc: "Each flag is also an environment variable; a flag wins over its variable."},
		{name: "mockserver mcp", synopsis: "--api-key KEY | --control [flags]", summary: "an MCP server over stdio", about: mcpAbout + `
It takes the serve command's flags and variables, with a free loopback port and a temporary
state file by default. Stdout carries only protocol messages; the log goes to stderr.`,
			flags: func() *flag.FlagSet { _, fs := serveFlags(true); return fs }, env: envName,
			envDoc: "Each flag is also an environment variable, the serve command's; a flag wins over its variable."},
		{name: "mockserver keys", synopsis: "[--fixtures F]", summary: "the test API keys of the fixtures",
			about: "Prints the test credentials of the fixtures, one a line: token, type, workspace, plan and scopes.",
			flags: func() *flag.FlagSet { _, _, fs := keysFlags(noEnv); return fs },
			env: func(f string) string {
				if f == "fixtures" {
					return envName(f)
				}
				return ""
			},
			envDoc: "`--fixtures` defaults to the server's `" + envName("fixtures") + "`."},
		{name: "mockserver proxy", synopsis: "--upstream URL", summary: "a validating proxy in front of a server of the API",
			about: `A validating reverse proxy in front of any server of the API: every exchange is checked
against openapi.json, and the findings are reported (and, with --record, the account, models
and completed assets are recorded as a fixture, and the timing of the jobs created through it).`,
			flags: func() *flag.FlagSet { _, fs := proxyFlags(); return fs }, env: proxyEnvName,
			envDoc: "Each flag is also an environment variable with a prefix of its own, `MOCKSERVER_PROXY_`, so that a proxy and a server configured in one environment do not take each other's `" + envName("addr") + "`; a flag wins over its variable."},
		{name: "mockserver fixtures timing", synopsis: "--recording DIR [--write F]", summary: "the timing of each model a recording learned, as fixture timing",
			about: timingAbout, flags: func() *flag.FlagSet { _, fs := timingFlags(); return fs }},
		{name: "mockserver conformance", synopsis: "--url URL", summary: "the conformance suite against a server of the API",
			about: conformanceAbout, flags: func() *flag.FlagSet { _, fs := conformanceFlags(); return fs },
			env: func(f string) string {
				v := conformanceEnvName(f)
				if older, ok := conformanceFallback[f]; ok {
					v += ", then " + older
				}
				return v
			},
			envDoc: "Each flag is also an environment variable; a flag wins over its variable. The url, the keys and spending also read the Go conformance test's variables, after the command's own. Give keys in the environment: a flag's value is visible to every user of the machine."},
		{name: "mockserver report", synopsis: "[--url URL] [--fail-on IDS]", summary: "the client report of a running server, for CI",
			about: reportAbout, flags: func() *flag.FlagSet { _, fs := reportFlags(); return fs }, env: reportEnvName,
			envDoc: "Each flag is also an environment variable: the server's own for `--url`, `--control-token` and `--db`, `MOCKSERVER_REPORT_<NAME>` for the others; a flag wins over its variable."},
		{name: "mockserver spec-diff", synopsis: "--against F|URL", summary: "what changed from openapi.json, what your traffic used first",
			about: specdiffAbout, flags: func() *flag.FlagSet { _, fs := specdiffFlags(); return fs }, env: specdiffEnvName,
			envDoc: "Each flag is also an environment variable; a flag wins over its variable."},
		{name: "mockserver health", synopsis: "[--url URL]", summary: "exit 0 when a server answers healthy",
			about: `Asks a running server whether it is healthy: exit 0 when it answers 200 on /_mock/health,
1 otherwise. It needs no shell or curl, so a minimal container image can use it as its HEALTHCHECK.`,
			flags: func() *flag.FlagSet { _, fs := healthFlags(noEnv); return fs },
			env: func(f string) string {
				switch f {
				case "url":
					return envName("addr")
				case "db":
					return envName("db")
				}
				return ""
			},
			envDoc: "The flags read the server's variables: without `--url`, the address is `" + envName("addr") + "` when set (https when `" + envName("tls") + "` or `" + envName("tls-cert") + "` is), else the address the server wrote beside its state file; `--db` defaults to `" + envName("db") + "`."},
		{name: "mockserver help", synopsis: "[command]", summary: "the help of a command (its --help)",
			about: `Prints the help of a command, as its --help does: mockserver help proxy is mockserver
proxy --help; mockserver help alone is mockserver --help.`},
		{name: "mockserver version", summary: "the version (also mockserver --version, -v)",
			about: `Prints the version: the one stamped at build time (-ldflags "-X main.version=1.2.3"),
else the module's (a tagged version, or dev- and the commit of a checkout).
mockserver --version and mockserver -v print the same.`},
	}
}

// usageCommands lists the commands, for the serve command's help.
func usageCommands(w io.Writer) {
	for i, c := range commandList() {
		line := c.name + " " + c.synopsis
		if i == 0 {
			fmt.Fprintf(w, "Usage: %s\n", line)
			continue
		}
		fmt.Fprintf(w, "       %-38s %s\n", line, c.summary)
	}
}
