package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/conformance"
	"github.com/mediamock/mediamock/internal/check"
)

var allKeys = conformance.Keys{Read: mediamock.KeyReadOnly, Generate: mediamock.KeyGenerateOnly, Publish: mediamock.KeyPublishOnly, All: mediamock.KeyAllScopes}

// brokenServer is the mock behind a front that breaks two rules: it drops
// X-RateLimit-Limit from every answer, and answers an unknown path 200.
func brokenServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := mediamock.RunT(t)
	h := srv.Handler()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/conformance/no-such-path") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{}`)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			if http.CanonicalHeaderKey(k) != "X-Ratelimit-Limit" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(broken.Close)
	return broken
}

// TestCheckOfTheMock runs the suite without the testing package's help and
// reads its reports back: the JSON and the JUnit XML say the same.
func TestCheckOfTheMock(t *testing.T) {
	srv := mediamock.RunT(t)
	rep, err := conformance.Check(t.Context(), conformance.Config{
		BaseURL: srv.BaseURL(), Client: srv.Client(), SpendCredits: true, Keys: allKeys,
		Wait: func(_ context.Context, d time.Duration) error { return srv.Advance(d) },
	})
	require.NoError(t, err)
	require.Zero(t, rep.Failed(), rep.Table())
	assert.Len(t, rep.Outcomes, len(check.Rules)+12)
	assert.Equal(t, len(rep.Outcomes), rep.Totals.Passed+rep.Totals.Skipped)
	assert.Equal(t, srv.BaseURL(), rep.URL)
	for _, o := range rep.Outcomes {
		assert.Empty(t, o.Failures, o.Rule)
		assert.Contains(t, []string{conformance.KindRule, conformance.KindCheck}, o.Kind)
	}
	checkReports(t, rep)
}

// TestCheckFindsABrokenServer: the rules and checks a server breaks fail,
// with the exchanges that broke them, in both reports; no key is written.
func TestCheckFindsABrokenServer(t *testing.T) {
	broken := brokenServer(t)
	rep, err := conformance.Check(t.Context(), conformance.Config{BaseURL: broken.URL + "/api/v1/", Keys: allKeys})
	require.NoError(t, err)
	byName := map[string]conformance.Outcome{}
	for _, o := range rep.Outcomes {
		byName[o.Rule] = o
	}
	headers := byName[check.RuleRateHeaders]
	assert.Equal(t, conformance.StatusFailed, headers.Status)
	require.NotEmpty(t, headers.Violations)
	assert.LessOrEqual(t, len(headers.Violations), 20, "a rule keeps its first 20 violations")
	v := headers.Violations[0]
	assert.Equal(t, check.RuleRateHeaders, v.Rule)
	assert.Contains(t, v.At, "X-RateLimit-Limit")
	assert.NotContains(t, v.Credential, "mk_test")

	unknown := byName["paths.unknown"]
	assert.Equal(t, conformance.StatusFailed, unknown.Status)
	assert.Contains(t, strings.Join(unknown.Failures, "\n"), "GET /conformance/no-such-path: got 200, want [404]")
	assert.Equal(t, conformance.StatusFailed, byName[check.RuleOperation].Status)
	assert.Equal(t, conformance.StatusPassed, byName["auth.missing_credentials"].Status, "a 401 carries no rate-limit headers")
	assert.Equal(t, conformance.StatusSkipped, byName["generation.lifecycle"].Status)
	assert.Equal(t, rep.Failed(), rep.Totals.Failed)
	assert.Greater(t, rep.Totals.Failed, 3, rep.Table())

	junit, _ := checkReports(t, rep)
	for _, s := range junit.Suites {
		for _, c := range s.Cases {
			if c.Name == "paths.unknown" {
				require.Len(t, c.Failures, 1)
				assert.Contains(t, c.Failures[0].Message, "no-such-path")
			}
		}
	}
}

// checkReports writes the report as JSON and JUnit XML, parses both back
// and holds them to the report: the same outcomes, the same counts, and no
// key anywhere.
func checkReports(t *testing.T, rep *conformance.Report) (*conformance.JUnitSuites, []byte) {
	t.Helper()
	var js, xb bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	require.NoError(t, rep.WriteJUnit(&xb))
	for _, k := range []string{allKeys.Read, allKeys.Generate, allKeys.Publish, allKeys.All} {
		assert.NotContains(t, js.String(), k)
		assert.NotContains(t, xb.String(), k)
	}

	var back conformance.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, rep.Totals, back.Totals)
	require.Len(t, back.Outcomes, len(rep.Outcomes))
	for i, o := range back.Outcomes {
		assert.Equal(t, rep.Outcomes[i].Rule, o.Rule)
		assert.Equal(t, rep.Outcomes[i].Status, o.Status)
		assert.Equal(t, rep.Outcomes[i].Failures, o.Failures)
	}

	require.True(t, strings.HasPrefix(xb.String(), xml.Header))
	var junit conformance.JUnitSuites
	require.NoError(t, xml.Unmarshal(xb.Bytes(), &junit))
	tests, failures, skipped := 0, 0, 0
	var names []string
	for _, s := range junit.Suites {
		n, f, sk := 0, 0, 0
		for _, c := range s.Cases {
			n++
			assert.Equal(t, s.Name, c.ClassName)
			if len(c.Failures) > 0 {
				f++
				assert.NotEmpty(t, c.Failures[0].Message)
				assert.NotEmpty(t, c.Failures[0].Text)
			}
			if c.Skipped != nil {
				sk++
				assert.NotEmpty(t, c.Skipped.Message)
			}
			assert.False(t, c.Skipped != nil && len(c.Failures) > 0, c.Name)
			names = append(names, c.Name)
		}
		assert.Equal(t, n, s.Tests, s.Name)
		assert.Equal(t, f, s.Failures, s.Name)
		assert.Equal(t, sk, s.Skipped, s.Name)
		assert.Zero(t, s.Errors)
		tests, failures, skipped = tests+n, failures+f, skipped+sk
	}
	assert.Equal(t, []string{conformance.JUnitRules, conformance.JUnitChecks}, []string{junit.Suites[0].Name, junit.Suites[1].Name})
	assert.Equal(t, len(rep.Outcomes), tests)
	assert.Equal(t, tests, junit.Tests)
	assert.Equal(t, rep.Totals.Failed, failures)
	assert.Equal(t, failures, junit.Failures)
	assert.Equal(t, rep.Totals.Skipped, skipped)
	for i, o := range rep.Outcomes {
		assert.Equal(t, o.Rule, names[i])
	}
	return &junit, xb.Bytes()
}

func TestCheckRefusesABadBaseURL(t *testing.T) {
	for _, u := range []string{"", "ftp://example.com/api/v1", "https://example.com/v2", "http:///api/v1", "://x"} {
		_, err := conformance.Check(t.Context(), conformance.Config{BaseURL: u})
		assert.ErrorIs(t, err, conformance.ErrConfig, u)
	}
	_, err := conformance.Check(t.Context(), conformance.Config{BaseURL: "https://user:secret@example.com/v2"})
	assert.NotContains(t, err.Error(), "secret")
}

// TestCheckStopsWithItsContext: a run whose context has ended fails the
// checks it has left, each saying why, and returns.
func TestCheckStopsWithItsContext(t *testing.T) {
	srv := mediamock.RunT(t)
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errors.New("stopped by the test"))
	rep, err := conformance.Check(ctx, conformance.Config{BaseURL: srv.BaseURL(), Client: srv.Client(), Keys: allKeys})
	require.NoError(t, err)
	for _, o := range rep.Outcomes {
		if o.Kind == conformance.KindCheck {
			assert.Equal(t, conformance.StatusFailed, o.Status, o.Rule)
			assert.Contains(t, strings.Join(o.Failures, " "), "stopped by the test", o.Rule)
		}
	}
}

// fakeT is a test as Run sees it, recording what Run tells it.
type fakeT struct {
	ctx      context.Context
	name     string
	errors   []string
	skipped  string
	subtests []*fakeT
}

func (f *fakeT) Helper()                  {}
func (f *fakeT) Context() context.Context { return f.ctx }
func (f *fakeT) Logf(string, ...any)      {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...); panic("fatal") }
func (f *fakeT) Skip(args ...any)                  { f.skipped = fmt.Sprint(args...) }
func (f *fakeT) Run(name string, fn func(*fakeT)) bool {
	sub := &fakeT{ctx: f.ctx, name: name}
	f.subtests = append(f.subtests, sub)
	fn(sub)
	return len(sub.errors) == 0
}

// TestRunFailsTheChecksThatFail: the adapter for Go tests fails the subtest
// of each failed check and skips the skipped ones.
func TestRunFailsTheChecksThatFail(t *testing.T) {
	broken := brokenServer(t)
	ft := &fakeT{ctx: t.Context()}
	rep := conformance.Run(ft, conformance.Config{BaseURL: broken.URL + "/api/v1", Keys: conformance.Keys{Read: mediamock.KeyReadOnly}})
	require.Len(t, ft.subtests, 12)
	failed := map[string]bool{}
	for _, s := range ft.subtests {
		failed[s.name] = len(s.errors) > 0
		if s.name == "generation.lifecycle" {
			assert.Contains(t, s.skipped, "--spend-credits")
		}
	}
	assert.True(t, failed["paths.unknown"])
	assert.True(t, failed["reads.shapes"], "its exchanges break ratelimit.headers")
	assert.False(t, failed["auth.missing_credentials"])
	assert.Positive(t, rep.Failed())
}
