package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// ReportEnvName is the environment variable of a report flag: the
// server's own for the address, the control token and the state file,
// MOCKSERVER_REPORT_<NAME> for the others.
func ReportEnvName(flagName string) string {
	switch flagName {
	case "url", "control-token", "db":
		return EnvName(flagName)
	}
	return "MOCKSERVER_REPORT_" + strings.TrimPrefix(EnvName(flagName), "MOCKSERVER_")
}

// Report is what the report command's flags set (Token is
// --control-token, Workspace --workspace-id).
type Report struct {
	URL, Token, Sandbox, Format, FailOn, Output, DB, HAR string
	Workspace                                            uint64
	Timeout                                              time.Duration
}

// reportAbout is what the report command does.
const reportAbout = `Grades the clients of a running server from every request it recorded of them: each finding
has a stable id, a severity, a count and the requests that prove it, by journal seq
(docs/reference/client-findings.md). With --har, writes the scope's journal as HAR 1.2 too.
Exit 0 when no finding matches --fail-on, 1 when one does, 2 on a usage error or when the
server cannot be asked.`

// ReportFlags makes the report command's flag set and the settings it
// parses into.
func ReportFlags() (*Report, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver report", flag.ContinueOnError)
	s := &Report{}
	fs.StringVar(&s.URL, "url", "http://127.0.0.1:8080", "root address of the running server")
	fs.StringVar(&s.Token, "control-token", "", "the server's control token, or a sandbox's (then the report is the sandbox's)")
	fs.StringVar(&s.Sandbox, "sandbox", "", "the report of this sandbox (sbx_...)")
	fs.Uint64Var(&s.Workspace, "workspace-id", 0, "the report of this workspace only")
	fs.StringVar(&s.Format, "format", "text", "text, json or junit (JUnit XML)")
	fs.StringVar(&s.FailOn, "fail-on", "", "comma-separated finding ids and severities (info, warning, error) that fail the report: exit 1")
	fs.StringVar(&s.Output, "output", "", "write the report to this file instead of stdout (a one-line summary goes to stdout)")
	fs.StringVar(&s.HAR, "har", "", "also write the scope's journal to this file as HAR 1.2 (an HTTP Archive, for DevTools, Charles, Insomnia, Postman, k6)")
	fs.StringVar(&s.DB, "db", "mediamock.db", "the server's state file, beside which a TLS server keeps the CA to trust")
	fs.DurationVar(&s.Timeout, "timeout", 30*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: mockserver report [flags]

`+reportAbout+`

Flags (each also an environment variable; a flag wins over its variable):
`)
		printFlags(w, fs, ReportEnvName, 14)
	}
	return s, fs
}
