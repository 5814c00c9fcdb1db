package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/mediamock/mediamock/conformance"
)

// ConformanceEnvName is the environment variable of a conformance flag:
// --key-read is MOCKSERVER_CONFORMANCE_KEY_READ.
func ConformanceEnvName(flagName string) string {
	return "MOCKSERVER_CONFORMANCE_" + strings.TrimPrefix(EnvName(flagName), "MOCKSERVER_")
}

// ConformanceFallback are the Go test's names of the conformance flags
// that have one: read when neither the flag nor its own variable is set.
var ConformanceFallback = map[string]string{
	"url":           conformance.EnvURL,
	"key-read":      conformance.EnvKeyRead,
	"key-generate":  conformance.EnvKeyGenerate,
	"key-publish":   conformance.EnvKeyPublish,
	"key-all":       conformance.EnvKeyAll,
	"spend-credits": conformance.EnvSpendCredits,
}

// Conformance is what the conformance command's flags set.
type Conformance struct {
	URL, Report, JUnit string
	Keys               conformance.Keys
	Spend              bool
	Timeout            time.Duration
}

// ConformanceFlags makes the conformance command's flag set and the
// settings it parses into.
func ConformanceFlags() (*Conformance, *flag.FlagSet) {
	fs := flag.NewFlagSet("mockserver conformance", flag.ContinueOnError)
	s := &Conformance{}
	fs.StringVar(&s.URL, "url", "", "base URL of the server to check, including /api/v1, like https://api.example.com/api/v1 (required)")
	fs.StringVar(&s.Keys.Read, "key-read", "", "a key with the read scope only")
	fs.StringVar(&s.Keys.Generate, "key-generate", "", "a key with the generate scope only")
	fs.StringVar(&s.Keys.Publish, "key-publish", "", "a key with the publish scope only")
	fs.StringVar(&s.Keys.All, "key-all", "", "optional: a key with every scope (lets credits.balance read the balance before a creation)")
	fs.BoolVar(&s.Spend, "spend-credits", false, "create one generation with the cheapest model of GET /models (spends credits)")
	fs.StringVar(&s.Report, "report", "", "write the report as JSON to this file")
	fs.StringVar(&s.JUnit, "junit", "", "write the report as JUnit XML to this file")
	fs.DurationVar(&s.Timeout, "timeout", 30*time.Minute, "longest time for the whole run; the checks left then fail")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: mockserver conformance --url URL [flags]

`+conformanceAbout+`

Flags (each also an environment variable; a flag wins over its variable; the url, the
keys and spending also read the Go test's MEDIAMOCK_CONFORMANCE_URL, MEDIAMOCK_KEY_READ,
_GENERATE, _PUBLISH, _ALL and MEDIAMOCK_SPEND_CREDITS=1). Give keys in the environment:
a flag's value is visible to every user of the machine.
`)
		printFlags(w, fs, ConformanceEnvName, 14)
	}
	return s, fs
}
