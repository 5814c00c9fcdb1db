package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/report"
)

// The report command: the client report of a running server (GET
// /_mock/report), for CI.
//
//	mockserver report --url http://127.0.0.1:8080 --fail-on error --format junit --output client-report.xml
//
// Exit 0 when no finding matches --fail-on, 1 when one does, 2 on a usage
// error or when the server cannot be asked.

// reportEnvName is the environment variable of a report flag: the
// server's own for the address, the control token and the state file,
// MOCKSERVER_REPORT_<NAME> for the others.
func reportEnvName(flagName string) string {
	switch flagName {
	case "url", "control-token", "db":
		return envName(flagName)
	}
	return "MOCKSERVER_REPORT_" + strings.TrimPrefix(envName(flagName), "MOCKSERVER_")
}

type reportSettings struct {
	url, token, sandbox, format, failOn, output, db string
	workspace                                       uint64
	timeout                                         time.Duration
}

// reportAbout is what the report command does.
const reportAbout = `Grades the clients of a running server from its journal: each finding has a stable id,
a severity, a count and the request ids that prove it (docs/reference/client-findings.md).
Exit 0 when no finding matches --fail-on, 1 when one does, 2 on a usage error or when the
server cannot be asked.`

// reportFlags makes the report command's flag set and the settings it
// parses into.
func reportFlags() (*reportSettings, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver report", flag.ContinueOnError)
	s := &reportSettings{}
	fs.StringVar(&s.url, "url", "http://127.0.0.1:8080", "root address of the running server")
	fs.StringVar(&s.token, "control-token", "", "the server's control token, or a sandbox's (then the report is the sandbox's)")
	fs.StringVar(&s.sandbox, "sandbox", "", "the report of this sandbox (sbx_...)")
	fs.Uint64Var(&s.workspace, "workspace-id", 0, "the report of this workspace only")
	fs.StringVar(&s.format, "format", "text", "text, json or junit (JUnit XML)")
	fs.StringVar(&s.failOn, "fail-on", "", "comma-separated finding ids and severities (info, warning, error) that fail the report: exit 1")
	fs.StringVar(&s.output, "output", "", "write the report to this file instead of stdout (a one-line summary goes to stdout)")
	fs.StringVar(&s.db, "db", "mediamock.db", "the server's state file, beside which a TLS server keeps the CA to trust")
	fs.DurationVar(&s.timeout, "timeout", 30*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: mockserver report [flags]

`+reportAbout+`

Flags (each also an environment variable; a flag wins over its variable):
`)
		printFlags(w, fs, reportEnvName, 14)
	}
	return s, fs
}

func parseReportSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*reportSettings, error) {
	s, fs := reportFlags()
	if _, err := parseCommandLine(fs, args, reportEnvName, getenv, stdout, stderr); err != nil {
		return nil, err
	}
	var failOn []string
	for v := range strings.SplitSeq(s.failOn, ",") {
		if v = strings.TrimSpace(v); v != "" {
			failOn = append(failOn, v)
		}
	}
	switch {
	case s.format != "text" && s.format != "json" && s.format != "junit":
		return nil, fmt.Errorf("--format must be text, json or junit, got %q", s.format)
	case s.timeout <= 0:
		return nil, fmt.Errorf("--timeout must be above 0, got %s", s.timeout)
	}
	if err := report.ValidFailOn(failOn); err != nil {
		return nil, err
	}
	s.failOn = strings.Join(failOn, ",")
	return s, nil
}

func runReport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	s, err := parseReportSettings(args, getenv, stdout, stderr)
	if code, stop := commandLine("mockserver report", err, stderr); stop {
		return code
	}
	q := url.Values{}
	if s.failOn != "" {
		q.Set("fail_on", s.failOn)
	}
	if s.sandbox != "" {
		q.Set("sandbox", s.sandbox)
	}
	if s.workspace != 0 {
		q.Set("workspace_id", fmt.Sprint(s.workspace))
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// One request, as JSON: the forms are made here from the same report,
	// and its failed field decides the exit code.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.url, "/")+"/_mock/report?"+q.Encode(), nil)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver report:", err)
		return 2
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := healthClient(s.db, getenv).Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver report:", err)
		return 2
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver report:", err)
		return 2
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "mockserver report: %s: %s\n", resp.Status, strings.TrimSpace(string(body)))
		return 2
	}
	var r report.Report
	if err := json.Unmarshal(body, &r); err != nil {
		fmt.Fprintln(stderr, "mockserver report: the answer is not a report:", err)
		return 2
	}
	out := report.Text(r)
	switch s.format {
	case "json":
		out = body
	case "junit":
		out = report.JUnit(r)
	}
	if s.output == "" {
		stdout.Write(out)
	} else {
		if err := os.WriteFile(s.output, out, 0o644); err != nil {
			fmt.Fprintln(stderr, "mockserver report:", err)
			return 2
		}
		fmt.Fprintf(stdout, "client report for %s: %d findings, %d requests; written to %s\n", r.Scope, len(r.Findings), r.Summary.Requests, s.output)
	}
	if r.Failed {
		fmt.Fprintf(stderr, "mockserver report: a finding matches --fail-on %s\n", s.failOn)
		return 1
	}
	return 0
}
