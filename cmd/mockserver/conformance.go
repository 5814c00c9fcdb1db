package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mediamock/mediamock/conformance"
	"github.com/mediamock/mediamock/internal/cli"
)

// The conformance command: the conformance suite against any server of the
// API, from the binary alone.
//
//	MOCKSERVER_CONFORMANCE_KEY_READ=... mockserver conformance --url https://api.example.com/api/v1 --junit conformance.xml --report conformance.json
//
// Each flag is also MOCKSERVER_CONFORMANCE_<NAME> (--key-read is
// MOCKSERVER_CONFORMANCE_KEY_READ). The url, the keys and spending also
// fall back to the Go test's names (MEDIAMOCK_CONFORMANCE_URL,
// MEDIAMOCK_KEY_READ, ..., MEDIAMOCK_SPEND_CREDITS), so one environment
// drives both. Exit 0 when nothing failed, 1 when a rule or check failed
// (or a report could not be written), 2 on a usage error.

// conformanceSettings are the conformance command's flags, and where
// each value came from.
type conformanceSettings struct {
	*cli.Conformance
	source map[string]string
}

func parseConformanceSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*conformanceSettings, error) {
	cs, fs := cli.ConformanceFlags()
	s := &conformanceSettings{Conformance: cs}
	var err error
	if s.source, err = parseCommandLine(fs, args, cli.ConformanceEnvName, getenv, stdout, stderr); err != nil {
		return nil, err
	}
	// The Go test's names, for what neither a flag nor our own variable set.
	for name, older := range cli.ConformanceFallback {
		if _, set := s.source[name]; set {
			continue
		}
		if v := getenv(older); v != "" {
			if err := fs.Set(name, v); err != nil {
				return nil, fmt.Errorf("invalid %s=%q: %v", older, v, err)
			}
			s.source[name] = older
		}
	}
	switch {
	case strings.TrimSpace(s.URL) == "":
		return nil, fmt.Errorf("--url (or %s) is required: the base URL of the server to check, including /api/v1", cli.ConformanceEnvName("url"))
	case s.Timeout <= 0:
		return nil, fmt.Errorf("%s must be above 0, got %s", s.name("timeout"), s.Timeout)
	}
	return s, nil
}

// name is how the user gave a setting: --timeout, or its variable.
func (s *conformanceSettings) name(flagName string) string {
	if n, ok := s.source[flagName]; ok {
		return n
	}
	return "--" + flagName
}

func runConformance(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	s, err := parseConformanceSettings(args, getenv, stdout, stderr)
	if code, stop := commandLine("mockserver conformance", err, stderr); stop {
		return code
	}
	ctx, cancel := context.WithTimeoutCause(ctx, s.Timeout, fmt.Errorf("the run took longer than %s (%s)", s.Timeout, s.name("timeout")))
	defer cancel()
	rep, err := conformance.Check(ctx, conformance.Config{
		BaseURL: s.URL, Keys: s.Keys, SpendCredits: s.Spend,
		Log: func(check, line string) { fmt.Fprintf(stderr, "%s: %s\n", check, line) },
	})
	if err != nil {
		fmt.Fprintln(stderr, "mockserver conformance:", strings.TrimPrefix(err.Error(), conformance.ErrConfig.Error()+": "))
		return 2
	}
	fmt.Fprintf(stdout, "conformance of %s\n%s", rep.URL, rep.Table())
	for _, o := range rep.Outcomes {
		for _, f := range o.Failures {
			fmt.Fprintf(stdout, "FAIL %s: %s\n", o.Rule, firstLine(f))
		}
	}
	fmt.Fprintf(stdout, "conformance of %s: %d passed, %d failed, %d skipped in %.1f s\n", rep.URL, rep.Totals.Passed, rep.Totals.Failed, rep.Totals.Skipped, rep.Seconds)
	code := 0
	if rep.Failed() > 0 {
		code = 1
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer) error
	}{{s.Report, rep.WriteJSON}, {s.JUnit, rep.WriteJUnit}} {
		if out.path == "" {
			continue
		}
		var b bytes.Buffer
		err := out.write(&b)
		if err == nil {
			err = os.WriteFile(out.path, b.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintln(stderr, "mockserver conformance: write the report:", err)
			code = 1
		}
	}
	return code
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
