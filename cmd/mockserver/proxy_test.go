package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

var proxyReady = regexp.MustCompile(`msg="mediamock proxy ready" url=(\S+)`)

// TestRunProxy runs `mockserver proxy` configured by MOCKSERVER_PROXY_*
// variables in front of an in-process mock (the server's own MOCKSERVER_ADDR
// is not the proxy's): traffic passes, the summary is served, and at
// shutdown the summary, the report file and the recording are written,
// with no token anywhere.
func TestRunProxy(t *testing.T) {
	mock := mediamock.RunT(t)
	dir := t.TempDir()
	env := fakeEnv{
		"MOCKSERVER_PROXY_UPSTREAM":      mock.BaseURL(),
		"MOCKSERVER_PROXY_ADDR":          "127.0.0.1:0",
		"MOCKSERVER_PROXY_REPORT":        filepath.Join(dir, "report.jsonl"),
		"MOCKSERVER_PROXY_REPORT_STDERR": "false",
		"MOCKSERVER_PROXY_RECORD":        filepath.Join(dir, "recording"),
		"MOCKSERVER_PROXY_FAIL_ON":       "drift",       // the mock drifts from nothing
		"MOCKSERVER_ADDR":                "127.0.0.1:1", // the server's: not the proxy's
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := newLogSinkFor(proxyReady)
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, []string{"proxy", "--max-validate-bytes", "100000"}, env.get, nil, io.Discard, log)
	}()
	var base string
	select {
	case base = <-log.ready:
	case code := <-exit:
		t.Fatalf("exited %d before it was ready:\n%s", code, log)
	case <-time.After(testkit.Bound):
		t.Fatalf("no ready line within %v:\n%s", testkit.Bound, log)
	}
	var account struct {
		WorkspaceName string `json:"workspace_name"`
	}
	if code := get(t, base+"/account", &account); code != http.StatusOK || account.WorkspaceName != "Acme Studio" {
		t.Fatalf("GET /account through the proxy: %d %+v", code, account)
	}
	if code := get(t, base+"/assets?limit=3", nil); code != http.StatusOK {
		t.Fatalf("GET /assets through the proxy: %d", code)
	}
	report := strings.TrimSuffix(base, "/api/v1") + "/_mock/proxy/report"
	var summary struct {
		Exchanges  int `json:"exchanges"`
		Violations int `json:"violations"`
	}
	if code := get(t, report, &summary); code != http.StatusOK || summary.Exchanges != 2 || summary.Violations != 0 {
		t.Fatalf("GET %s: %d %+v", report, code, summary)
	}
	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, log)
		}
	case <-time.After(testkit.Bound):
		t.Fatalf("still running %v after its context ended:\n%s", testkit.Bound, log)
	}
	out := log.String()
	for _, want := range []string{"proxy summary: 2 exchanges", "ratelimit.headers", "recorded", "drift: none"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	fixture, err := os.ReadFile(filepath.Join(dir, "recording", "fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.jsonl")); err != nil {
		t.Errorf("no report file: %v", err)
	}
	for name, text := range map[string]string{"stderr": out, "fixture": string(fixture)} {
		if strings.Contains(text, mediamock.KeyAllScopes) {
			t.Errorf("%s holds the token", name)
		}
	}
}

func TestRunProxyBadSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  fakeEnv
		want string
	}{
		{nil, fakeEnv{}, "--upstream (or MOCKSERVER_PROXY_UPSTREAM) is required"},
		{[]string{"--upstream", "ftp://example.com"}, fakeEnv{}, "want an http(s) URL"},
		{nil, fakeEnv{"MOCKSERVER_PROXY_UPSTREAM": "https://example.com", "MOCKSERVER_PROXY_MAX_VALIDATE_BYTES": "0"}, "MOCKSERVER_PROXY_MAX_VALIDATE_BYTES must be above 0"},
		{nil, fakeEnv{"MOCKSERVER_PROXY_UPSTREAM": "https://example.com", "MOCKSERVER_PROXY_DIAL_TIMEOUT": "soon"}, `invalid MOCKSERVER_PROXY_DIAL_TIMEOUT="soon"`},
		{[]string{"--upstream", "https://example.com", "extra"}, fakeEnv{}, `unexpected argument "extra"`},
		{[]string{"--upstream", "https://example.com", "--fail-on", "warning"}, fakeEnv{}, `--fail-on must be violation or drift, got "warning"`},
		{nil, fakeEnv{"MOCKSERVER_PROXY_UPSTREAM": "https://example.com", "MOCKSERVER_PROXY_FAIL_ON": "all"}, `MOCKSERVER_PROXY_FAIL_ON must be violation or drift`},
	} {
		var stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"proxy"}, tc.args...), tc.env.get, nil, io.Discard, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and %q", tc.args, tc.env, code, stderr.String(), tc.want)
		}
	}
}

// TestRunProxyFailOn: against an upstream that answers with a field the
// document does not declare, --fail-on drift exits 1 at shutdown and says
// why; --fail-on violation (drift is no violation) and no --fail-on exit 0.
func TestRunProxyFailOn(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-RateLimit-Limit", "120")
		w.Header().Set("X-RateLimit-Remaining", "119")
		w.Header().Set("X-RateLimit-Reset", "1767225660")
		io.WriteString(w, `{"object": "account", "workspace_id": 1, "workspace_name": "W", "plan": "pro", "credits_balance": 5, "rate_limit_per_minute": 120,
			"scopes": ["read"], "token_type": "api_key", "publishing_allowed": true, "monthly_gifts": [], "tier": "gold"}`)
	}))
	defer up.Close()
	for _, tc := range []struct {
		failOn string
		code   int
	}{{"drift", 1}, {"violation", 0}, {"", 0}} {
		t.Run("fail-on="+tc.failOn, func(t *testing.T) {
			args := []string{"proxy", "--upstream", up.URL + "/api/v1", "--addr", "127.0.0.1:0", "--report-stderr=false"}
			if tc.failOn != "" {
				args = append(args, "--fail-on", tc.failOn)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			log := newLogSinkFor(proxyReady)
			exit := make(chan int, 1)
			go func() { exit <- Run(ctx, args, fakeEnv{}.get, nil, io.Discard, log) }()
			var base string
			select {
			case base = <-log.ready:
			case code := <-exit:
				t.Fatalf("exited %d before it was ready:\n%s", code, log)
			case <-time.After(testkit.Bound):
				t.Fatalf("no ready line within %v:\n%s", testkit.Bound, log)
			}
			if code := get(t, base+"/account", nil); code != http.StatusOK {
				t.Fatalf("GET /account: %d", code)
			}
			cancel()
			var code int
			select {
			case code = <-exit:
			case <-time.After(testkit.Bound):
				t.Fatalf("still running %v after its context ended:\n%s", testkit.Bound, log)
			}
			out := log.String()
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.code, out)
			}
			if !strings.Contains(out, "field        1  getAccount") && !strings.Contains(out, "$.tier") {
				t.Errorf("the summary lacks the drift:\n%s", out)
			}
			why := "exit 1: --fail-on fails on drift: 1 drift findings in 1 exchanges"
			if got := strings.Contains(out, why); got != (tc.code == 1) {
				t.Errorf("stderr has %q: %v, want %v:\n%s", why, got, tc.code == 1, out)
			}
		})
	}
}
