package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mediamock/mediamock/conformance"
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

// conformanceEnvName is the environment variable of a conformance flag.
func conformanceEnvName(flagName string) string {
	return "MOCKSERVER_CONFORMANCE_" + strings.TrimPrefix(envName(flagName), "MOCKSERVER_")
}

// conformanceFallback are the Go test's names of the flags that have one.
var conformanceFallback = map[string]string{
	"url":           conformance.EnvURL,
	"key-read":      conformance.EnvKeyRead,
	"key-generate":  conformance.EnvKeyGenerate,
	"key-publish":   conformance.EnvKeyPublish,
	"key-all":       conformance.EnvKeyAll,
	"spend-credits": conformance.EnvSpendCredits,
}

// conformanceSettings are the conformance command's flags.
type conformanceSettings struct {
	url, report, junit string
	keys               conformance.Keys
	spend              bool
	timeout            time.Duration
	source             map[string]string
}

// conformanceFlags makes the conformance command's flag set and the
// settings it parses into.
func conformanceFlags() (*conformanceSettings, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver conformance", flag.ContinueOnError)
	s := &conformanceSettings{}
	fs.StringVar(&s.url, "url", "", "base URL of the server to check, including /api/v1, like https://api.example.com/api/v1 (required)")
	fs.StringVar(&s.keys.Read, "key-read", "", "a key with the read scope only")
	fs.StringVar(&s.keys.Generate, "key-generate", "", "a key with the generate scope only")
	fs.StringVar(&s.keys.Publish, "key-publish", "", "a key with the publish scope only")
	fs.StringVar(&s.keys.All, "key-all", "", "optional: a key with every scope (lets credits.balance read the balance before a creation)")
	fs.BoolVar(&s.spend, "spend-credits", false, "create one generation with the cheapest model of GET /models (spends credits)")
	fs.StringVar(&s.report, "report", "", "write the report as JSON to this file")
	fs.StringVar(&s.junit, "junit", "", "write the report as JUnit XML to this file")
	fs.DurationVar(&s.timeout, "timeout", 30*time.Minute, "longest time for the whole run; the checks left then fail")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: mockserver conformance --url URL [flags]

`+conformanceAbout+`

Flags (each also an environment variable; a flag wins over its variable; the url, the
keys and spending also read the Go test's MEDIAMOCK_CONFORMANCE_URL, MEDIAMOCK_KEY_READ,
_GENERATE, _PUBLISH, _ALL and MEDIAMOCK_SPEND_CREDITS=1). Give keys in the environment:
a flag's value is visible to every user of the machine.
`)
		printFlags(w, fs, conformanceEnvName, 14)
	}
	return s, fs
}

func parseConformanceSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) (*conformanceSettings, error) {
	s, fs := conformanceFlags()
	var err error
	if s.source, err = parseCommandLine(fs, args, conformanceEnvName, getenv, stdout, stderr); err != nil {
		return nil, err
	}
	// The Go test's names, for what neither a flag nor our own variable set.
	for name, older := range conformanceFallback {
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
	case strings.TrimSpace(s.url) == "":
		return nil, fmt.Errorf("--url (or %s) is required: the base URL of the server to check, including /api/v1", conformanceEnvName("url"))
	case s.timeout <= 0:
		return nil, fmt.Errorf("%s must be above 0, got %s", s.name("timeout"), s.timeout)
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
	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, fmt.Errorf("the run took longer than %s (%s)", s.timeout, s.name("timeout")))
	defer cancel()
	rep, err := conformance.Check(ctx, conformance.Config{
		BaseURL: s.url, Keys: s.keys, SpendCredits: s.spend,
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
	}{{s.report, rep.WriteJSON}, {s.junit, rep.WriteJUnit}} {
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
