package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/cli"
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

// maxDocumentBytes bounds a document, coverage or journal read.
const maxDocumentBytes = 64 << 20

// specdiffSettings are the spec-diff command's flags, and where each
// value came from.
type specdiffSettings struct {
	*cli.SpecDiff
	source map[string]string
}

func parseSpecdiffSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*specdiffSettings, error) {
	ds, fs := cli.SpecDiffFlags()
	s := &specdiffSettings{SpecDiff: ds}
	var err error
	if s.source, err = parseCommandLine(fs, args, cli.SpecDiffEnvName, getenv, stdout, stderr); err != nil {
		return nil, err
	}
	name := func(f string) string {
		if n, ok := s.source[f]; ok {
			return n
		}
		return "--" + f
	}
	switch {
	case s.Against == "":
		return nil, fmt.Errorf("--against (or %s) is required: the document to compare openapi.json with, a file or an http(s) URL", cli.SpecDiffEnvName("against"))
	case s.Format != "text" && s.Format != "json":
		return nil, fmt.Errorf("%s must be text or json, got %q", name("format"), s.Format)
	case s.FailOn != "" && s.FailOn != "breaking" && s.FailOn != "used-breaking":
		return nil, fmt.Errorf("%s must be breaking or used-breaking, got %q", name("fail-on"), s.FailOn)
	case s.Timeout <= 0:
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
	theirs, err := readDocument(ctx, s.Against, s.Timeout)
	if err != nil {
		return fail(fmt.Errorf("--against: %w", err))
	}
	var traffic *specdiff.Traffic
	if s.Coverage != "" || s.Journal != "" {
		traffic = &specdiff.Traffic{}
	}
	if s.Coverage != "" {
		data, err := readFile(s.Coverage)
		if err == nil {
			err = traffic.ReadCoverage(data)
		}
		if err != nil {
			return fail(fmt.Errorf("--coverage %s: %w", s.Coverage, err))
		}
	}
	if s.Journal != "" {
		data, err := readFile(s.Journal)
		if err == nil {
			err = traffic.ReadJournal(data)
		}
		if err != nil {
			return fail(fmt.Errorf("--journal %s: %w", s.Journal, err))
		}
	}
	report, err := specdiff.Diff(specdiff.Options{Base: spec.OpenAPI, BaseName: "openapi.json (embedded)", Revision: theirs, RevisionName: s.Against, Traffic: traffic})
	if err != nil {
		return fail(err)
	}
	if s.Format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(report)
	} else {
		report.WriteText(stdout)
	}
	switch {
	case s.FailOn == "breaking" && report.Summary.Breaking > 0:
		fmt.Fprintf(stderr, "mockserver spec-diff: %d breaking %s (--fail-on breaking)\n", report.Summary.Breaking, plural(report.Summary.Breaking))
		return 1
	case s.FailOn == "used-breaking" && report.Summary.UsedBreaking > 0:
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
