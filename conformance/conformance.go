// Package conformance checks any server of the API from the outside: the
// real service, a staging build, this mock. It needs a base URL and one
// key per scope, reads what a real workspace allows, sends bad inputs, and
// creates a generation only when spending credits is allowed. Every
// exchange is held to openapi.json and to the rules of the specification
// (the checker of internal/proxy). At the end it lists which rules were
// checked and which were skipped, and why.
//
// From the command line, with the mockserver binary alone:
//
//	MOCKSERVER_CONFORMANCE_KEY_READ=... mockserver conformance --url https://api.example.com/api/v1 --junit conformance.xml
//
// From a program, without the testing package:
//
//	rep, err := conformance.Check(ctx, conformance.Config{BaseURL: url, Keys: conformance.Keys{Read: key}})
//	rep.WriteJUnit(f)
//
// From Go tests, each check a subtest:
//
//	conformance.Run(t, conformance.Config{BaseURL: srv.BaseURL(), Keys: conformance.Keys{Read: "mk_test_read_only", ...}})
package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/check"
)

// The environment of the Go test against a running server.
const (
	EnvURL          = "MEDIAMOCK_CONFORMANCE_URL"    // base URL, including /api/v1
	EnvKeyRead      = "MEDIAMOCK_KEY_READ"           // a key with the read scope only
	EnvKeyGenerate  = "MEDIAMOCK_KEY_GENERATE"       // a key with the generate scope only
	EnvKeyPublish   = "MEDIAMOCK_KEY_PUBLISH"        // a key with the publish scope only
	EnvKeyAll       = "MEDIAMOCK_KEY_ALL"            // optional: a key with every scope
	EnvSpendCredits = "MEDIAMOCK_SPEND_CREDITS"      // 1: create a generation with the cheapest model
	EnvReport       = "MEDIAMOCK_CONFORMANCE_REPORT" // optional: write the rule table to this file
)

// Keys are the credentials of one workspace, one per scope. Any may be
// empty: the checks that need it are skipped.
type Keys struct {
	Read, Generate, Publish, All string
}

// Config is what a run needs.
type Config struct {
	// BaseURL is the service's {base_url}, ending in /api/v1.
	BaseURL string
	Keys    Keys
	// SpendCredits allows creating one generation with the cheapest model
	// of GET /models.
	SpendCredits bool
	// Client makes the requests; nil is a client with the proxy's timeouts.
	Client *http.Client
	// Wait waits out a 429's Retry-After; nil waits on the wall clock. A
	// test against an in-process mock passes one that moves its simulated
	// clock instead.
	Wait func(ctx context.Context, d time.Duration) error
	// ReportPath, when set, receives the rule table (Run only).
	ReportPath string
	// Log, when set, receives the progress of each check as it runs (a
	// 429 waited out): the check's name and one line.
	Log func(check, line string)
}

// FromEnv reads a configuration from the environment; ok is false when
// MEDIAMOCK_CONFORMANCE_URL is unset.
func FromEnv(getenv func(string) string) (cfg Config, ok bool) {
	cfg = Config{
		BaseURL:      strings.TrimSpace(getenv(EnvURL)),
		Keys:         Keys{Read: getenv(EnvKeyRead), Generate: getenv(EnvKeyGenerate), Publish: getenv(EnvKeyPublish), All: getenv(EnvKeyAll)},
		SpendCredits: getenv(EnvSpendCredits) == "1",
		ReportPath:   getenv(EnvReport),
	}
	return cfg, cfg.BaseURL != ""
}

// ErrConfig is wrapped by the error of Check when the configuration cannot
// be used (a base URL that is not one), before any request is made.
var ErrConfig = errors.New("conformance: bad configuration")

// Check runs every check the configuration allows, in order, and returns
// the report: each rule of the checker and each check with its outcome,
// time, failures and the violations of its exchanges. A failed check is in
// the report, not an error; the error is for a configuration that cannot
// run at all. When ctx ends, the checks left fail with its error.
func Check(ctx context.Context, cfg Config) (*Report, error) {
	s, err := newSuite(cfg)
	if err != nil {
		return nil, err
	}
	for _, sc := range checks {
		s.runScenario(ctx, sc, nil)
	}
	return s.report(), nil
}

// TB is what Run needs of a test: *testing.T satisfies it. The package
// names no type of the testing package, so a binary that links it (the
// mockserver command) does not link testing and its flags.
type TB[T any] interface {
	Helper()
	Context() context.Context
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Run(name string, f func(T)) bool
}

// Run runs Check's checks as subtests of t: a failure of a check fails its
// subtest, a skip skips it. It logs the table of rules checked and skipped
// (and writes it to cfg.ReportPath when set). A violation of a rule of
// the checker fails the check whose exchange broke it.
func Run[T TB[T]](t T, cfg Config) *Report {
	t.Helper()
	s, err := newSuite(cfg)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, sc := range checks {
		t.Run(sc.name, func(st T) {
			st.Helper()
			o := s.runScenario(st.Context(), sc, func(line string) { st.Logf("%s", line) })
			for _, f := range o.Failures {
				st.Errorf("%s", f)
			}
			if o.Status == StatusSkipped {
				st.Skip(o.Detail)
			}
		})
	}
	rep := s.report()
	t.Logf("conformance of %s:\n%s", rep.URL, rep.Table())
	if cfg.ReportPath != "" {
		if err := os.WriteFile(cfg.ReportPath, []byte(rep.Table()), 0o644); err != nil {
			t.Errorf("write the report: %v", err)
		}
	}
	return rep
}

// parseBase checks a base URL and returns it without a trailing slash, its
// path, and how reports show it (without a password).
func parseBase(raw string) (base, prefix, shown string, err error) {
	base = strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(u.Path, check.BasePath) {
		if u != nil {
			raw = u.Redacted()
		}
		return "", "", "", fmt.Errorf("%w: %q is not a base URL: want http(s)://HOST/.../api/v1, like https://api.example.com/api/v1", ErrConfig, raw)
	}
	return base, u.Path, u.Redacted(), nil
}
