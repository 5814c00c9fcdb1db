package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/mediamock/mediamock/internal/cli"
	"github.com/mediamock/mediamock/internal/report"
)

// The report command: the client report of a running server (GET
// /_mock/report), for CI.
//
//	mockserver report --url http://127.0.0.1:8080 --fail-on error --format junit --output client-report.xml
//
// Exit 0 when no finding matches --fail-on, 1 when one does, 2 on a usage
// error or when the server cannot be asked.

func parseReportSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*cli.Report, error) {
	s, fs := cli.ReportFlags()
	if _, err := parseCommandLine(fs, args, cli.ReportEnvName, getenv, stdout, stderr); err != nil {
		return nil, err
	}
	var failOn []string
	for v := range strings.SplitSeq(s.FailOn, ",") {
		if v = strings.TrimSpace(v); v != "" {
			failOn = append(failOn, v)
		}
	}
	switch {
	case s.Format != "text" && s.Format != "json" && s.Format != "junit":
		return nil, fmt.Errorf("--format must be text, json or junit, got %q", s.Format)
	case s.Timeout <= 0:
		return nil, fmt.Errorf("--timeout must be above 0, got %s", s.Timeout)
	}
	if err := report.ValidFailOn(failOn); err != nil {
		return nil, err
	}
	s.FailOn = strings.Join(failOn, ",")
	return s, nil
}

func runReport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	s, err := parseReportSettings(args, getenv, stdout, stderr)
	if code, stop := commandLine("mockserver report", err, stderr); stop {
		return code
	}
	q := url.Values{}
	if s.FailOn != "" {
		q.Set("fail_on", s.FailOn)
	}
	if s.Sandbox != "" {
		q.Set("sandbox", s.Sandbox)
	}
	if s.Workspace != 0 {
		q.Set("workspace_id", fmt.Sprint(s.Workspace))
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	// One request, as JSON: the forms are made here from the same report,
	// and its failed field decides the exit code.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.URL, "/")+"/_mock/report?"+q.Encode(), nil)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver report:", err)
		return 2
	}
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	resp, err := healthClient(s.DB, getenv).Do(req)
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
	switch s.Format {
	case "json":
		out = body
	case "junit":
		out = report.JUnit(r)
	}
	if s.Output == "" {
		stdout.Write(out)
	} else {
		if err := os.WriteFile(s.Output, out, 0o644); err != nil {
			fmt.Fprintln(stderr, "mockserver report:", err)
			return 2
		}
		fmt.Fprintf(stdout, "client report for %s: %d findings, %d requests; written to %s\n", r.Scope, len(r.Findings), r.Summary.Requests, s.Output)
	}
	if s.HAR != "" {
		q.Del("fail_on")
		q.Set("format", "har")
		q.Set("limit", "100000")
		n, err := saveHAR(ctx, s, q, getenv)
		if err != nil {
			fmt.Fprintln(stderr, "mockserver report: --har:", err)
			return 2
		}
		fmt.Fprintf(stdout, "the journal as HAR: %d bytes written to %s\n", n, s.HAR)
	}
	if r.Failed {
		fmt.Fprintf(stderr, "mockserver report: a finding matches --fail-on %s\n", s.FailOn)
		return 1
	}
	return 0
}

// saveHAR writes the scope's journal as HAR (GET /_mock/journal?format=har)
// to the file --har names, as it comes.
func saveHAR(ctx context.Context, s *cli.Report, q url.Values, getenv func(string) string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.URL, "/")+"/_mock/journal?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	resp, err := healthClient(s.DB, getenv).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	f, err := os.Create(s.HAR)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}
