package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/specdiff"
	"github.com/mediamock/mediamock/spec"
)

// The spec-diff command: what changes between the embedded openapi.json
// and another document, the changes the client's recorded traffic touched
// first.
//
//	mockserver spec-diff --against https://api.example.com/api/v1/openapi.json --journal journal.json
//	MOCKSERVER_SPECDIFF_AGAINST=theirs.yaml mockserver spec-diff --coverage coverage.json --fail-on used-breaking
//
// Each flag is also MOCKSERVER_SPECDIFF_<NAME>. Exit 0, or 1 when --fail-on
// finds what it looks for; 2 for a bad command line or an input that cannot
// be read (a missing file, an unreachable URL, a document that is not
// OpenAPI 3).

// specdiffEnvName is the environment variable of a spec-diff flag.
func specdiffEnvName(flagName string) string {
	return "MOCKSERVER_SPECDIFF_" + strings.TrimPrefix(envName(flagName), "MOCKSERVER_")
}

// maxDocumentBytes bounds a document, coverage or journal read.
const maxDocumentBytes = 64 << 20

type specdiffSettings struct {
	against, coverage, journal, format, failOn string
	timeout                                    time.Duration
	source                                     map[string]string
}

// specdiffFlags makes the spec-diff command's flag set and the settings
// it parses into.
func specdiffFlags() (*specdiffSettings, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver spec-diff", flag.ContinueOnError)
	s := &specdiffSettings{}
	fs.StringVar(&s.against, "against", "", "the document to compare openapi.json with: a file or an http(s) URL, JSON or YAML (required)")
	fs.StringVar(&s.coverage, "coverage", "", "a saved coverage report (GET /_mock/coverage): which operations and statuses the client used")
	fs.StringVar(&s.journal, "journal", "", "a saved journal (GET /_mock/journal, JSON or JSON lines): the parameters and fields the client used")
	fs.StringVar(&s.format, "format", "text", "output: text or json")
	fs.StringVar(&s.failOn, "fail-on", "", "exit 1 when a change is breaking (breaking) or breaking and used by the traffic (used-breaking)")
	fs.DurationVar(&s.timeout, "timeout", 30*time.Second, "longest time to fetch --against from a URL")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: mockserver spec-diff --against FILE|URL [--coverage FILE] [--journal FILE] [flags]

`+specdiffAbout+`

Flags (each also an environment variable; a flag wins over its variable):
`)
		printFlags(w, fs, specdiffEnvName, 10)
	}
	return s, fs
}

func parseSpecdiffSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*specdiffSettings, error) {
	s, fs := specdiffFlags()
	var err error
	if s.source, err = parseCommandLine(fs, args, specdiffEnvName, getenv, stdout, stderr); err != nil {
		return nil, err
	}
	name := func(f string) string {
		if n, ok := s.source[f]; ok {
			return n
		}
		return "--" + f
	}
	switch {
	case s.against == "":
		return nil, fmt.Errorf("--against (or %s) is required: the document to compare openapi.json with, a file or an http(s) URL", specdiffEnvName("against"))
	case s.format != "text" && s.format != "json":
		return nil, fmt.Errorf("%s must be text or json, got %q", name("format"), s.format)
	case s.failOn != "" && s.failOn != "breaking" && s.failOn != "used-breaking":
		return nil, fmt.Errorf("%s must be breaking or used-breaking, got %q", name("fail-on"), s.failOn)
	case s.timeout <= 0:
		return nil, fmt.Errorf("%s must be above 0", name("timeout"))
	}
	return s, nil
}

func runSpecdiff(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	s, err := parseSpecdiffSettings(args, getenv, stdout, stderr)
	if code, stop := commandLine("mockserver spec-diff", err, stderr); stop {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "mockserver spec-diff:", err)
		return 2
	}
	theirs, err := readDocument(ctx, s.against, s.timeout)
	if err != nil {
		return fail(fmt.Errorf("--against: %w", err))
	}
	var traffic *specdiff.Traffic
	if s.coverage != "" || s.journal != "" {
		traffic = &specdiff.Traffic{}
	}
	if s.coverage != "" {
		data, err := readFile(s.coverage)
		if err == nil {
			err = traffic.ReadCoverage(data)
		}
		if err != nil {
			return fail(fmt.Errorf("--coverage %s: %w", s.coverage, err))
		}
	}
	if s.journal != "" {
		data, err := readFile(s.journal)
		if err == nil {
			err = traffic.ReadJournal(data)
		}
		if err != nil {
			return fail(fmt.Errorf("--journal %s: %w", s.journal, err))
		}
	}
	report, err := specdiff.Diff(specdiff.Options{Base: spec.OpenAPI, BaseName: "openapi.json (embedded)", Revision: theirs, RevisionName: s.against, Traffic: traffic})
	if err != nil {
		return fail(err)
	}
	if s.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(report)
	} else {
		report.WriteText(stdout)
	}
	switch {
	case s.failOn == "breaking" && report.Summary.Breaking > 0:
		fmt.Fprintf(stderr, "mockserver spec-diff: %d breaking %s (--fail-on breaking)\n", report.Summary.Breaking, plural(report.Summary.Breaking))
		return 1
	case s.failOn == "used-breaking" && report.Summary.UsedBreaking > 0:
		fmt.Fprintf(stderr, "mockserver spec-diff: %d breaking %s the traffic used (--fail-on used-breaking)\n", report.Summary.UsedBreaking, plural(report.Summary.UsedBreaking))
		return 1
	}
	return 0
}

func plural(n int) string {
	if n == 1 {
		return "change"
	}
	return "changes"
}

// readDocument reads a file, or fetches an http(s) URL within the timeout.
func readDocument(ctx context.Context, src string, timeout time.Duration) ([]byte, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		return readFile(src)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", src, res.Status)
	}
	return readAll(res.Body, "GET "+src)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path)
}

func readAll(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("%s is above %d MiB", name, maxDocumentBytes>>20)
	}
	return data, nil
}
