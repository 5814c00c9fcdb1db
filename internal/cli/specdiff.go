package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// SpecDiffEnvName is the environment variable of a spec-diff flag:
// --against is MOCKSERVER_SPECDIFF_AGAINST.
func SpecDiffEnvName(flagName string) string {
	return "MOCKSERVER_SPECDIFF_" + strings.TrimPrefix(EnvName(flagName), "MOCKSERVER_")
}

// SpecDiff is what the spec-diff command's flags set.
type SpecDiff struct {
	Against, Coverage, Journal, Format, FailOn string
	Timeout                                    time.Duration
}

// SpecDiffFlags makes the spec-diff command's flag set and the settings
// it parses into.
func SpecDiffFlags() (*SpecDiff, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver spec-diff", flag.ContinueOnError)
	s := &SpecDiff{}
	fs.StringVar(&s.Against, "against", "", "the document to compare openapi.json with: a file or an http(s) URL, JSON or YAML (required)")
	fs.StringVar(&s.Coverage, "coverage", "", "a saved coverage report (GET /_mock/coverage): which operations and statuses the client used")
	fs.StringVar(&s.Journal, "journal", "", "a saved journal (GET /_mock/journal, JSON or JSON lines): the parameters and fields the client used")
	fs.StringVar(&s.Format, "format", "text", "output: text or json")
	fs.StringVar(&s.FailOn, "fail-on", "", "exit 1 when a change is breaking (breaking) or breaking and used by the traffic (used-breaking)")
	fs.DurationVar(&s.Timeout, "timeout", 30*time.Second, "longest time to fetch --against from a URL")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: mockserver spec-diff --against FILE|URL [--coverage FILE] [--journal FILE] [flags]

`+specdiffAbout+`

Flags (each also an environment variable; a flag wins over its variable):
`)
		printFlags(w, fs, SpecDiffEnvName, 10)
	}
	return s, fs
}
