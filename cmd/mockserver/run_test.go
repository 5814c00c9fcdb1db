package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediamock/mediamock/internal/testkit"
)

// These tests run the command in-process through Run, the way main does,
// with a fake environment: a container configures the server by MOCKSERVER_*
// variables alone. Readiness is the "mediamock ready" log line, read from the
// stderr writer, so nothing polls or sleeps.

// fakeEnv is an environment with only its own keys.
type fakeEnv map[string]string

func (e fakeEnv) get(key string) string { return e[key] }

var readyLine = regexp.MustCompile(`msg="mediamock ready" url=(\S+)`)

// logSink is Run's stderr: it keeps the log and announces the ready line.
type logSink struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	line  *regexp.Regexp // the ready line, its URL the first group
	seen  bool
	ready chan string // the ready line's URL, once
}

// newLogSink announces the server's ready line.
func newLogSink() *logSink { return newLogSinkFor(readyLine) }

// newLogSinkFor announces the first line that matches line.
func newLogSinkFor(line *regexp.Regexp) *logSink {
	return &logSink{line: line, ready: make(chan string, 1)}
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	if !s.seen {
		if m := s.line.FindSubmatch(s.buf.Bytes()); m != nil {
			s.seen = true
			s.ready <- string(m[1])
		}
	}
	return len(p), nil
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// server is one Run of the serve command in a goroutine.
type server struct {
	root   string // http://127.0.0.1:PORT
	addr   string // 127.0.0.1:PORT
	cancel context.CancelFunc
	exit   chan int
	log    *logSink
	code   int
	done   bool
}

// startServer runs the command with env and no arguments and waits for its
// ready line. The server stops when the test ends, if the test did not stop it.
func startServer(t *testing.T, env fakeEnv, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{cancel: cancel, exit: make(chan int, 1), log: newLogSink()}
	go func() { s.exit <- Run(ctx, args, env.get, nil, io.Discard, s.log) }()
	t.Cleanup(func() { s.stop(t) })
	select {
	case u := <-s.log.ready:
		s.root = strings.TrimSuffix(u, "/api/v1")
		s.addr = strings.TrimPrefix(s.root, "http://")
	case code := <-s.exit:
		s.done, s.code = true, code
		t.Fatalf("Run exited %d before it was ready; log:\n%s", code, s.log)
	case <-time.After(testkit.Bound):
		t.Fatalf("no ready line within %v; log:\n%s", testkit.Bound, s.log)
	}
	return s
}

// stop cancels Run's context, as SIGTERM does, and returns its exit code.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	if s.done {
		return s.code
	}
	s.cancel()
	select {
	case s.code = <-s.exit:
		s.done = true
	case <-time.After(testkit.Bound):
		t.Fatalf("Run still running %v after its context ended; log:\n%s", testkit.Bound, s.log)
	}
	return s.code
}

func get(t *testing.T, url string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer mk_test_all_scopes")
	client := &http.Client{Timeout: testkit.Bound, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, body)
		}
	}
	return resp.StatusCode
}

// containerEnv is the configuration a container gives: variables only.
func containerEnv(t *testing.T) fakeEnv {
	return fakeEnv{
		"MOCKSERVER_ADDR":       "127.0.0.1:0",
		"MOCKSERVER_DB":         filepath.Join(t.TempDir(), "mediamock.db"),
		"MOCKSERVER_PUBLIC_URL": "http://mock.internal:8080",
		"MOCKSERVER_CLOCK":      "manual",
	}
}

func TestRunConfiguredByEnvironmentOnly(t *testing.T) {
	// The process environment holds values that would fail: Run must read
	// only the getenv it is given.
	t.Setenv("MOCKSERVER_CLOCK", "sideways")
	t.Setenv("MOCKSERVER_ADDR", "256.0.0.1:1")
	env := containerEnv(t)
	s := startServer(t, env)

	for _, want := range []string{"clock=manual", "db=" + env["MOCKSERVER_DB"], "version=" + version} {
		if !strings.Contains(s.log.String(), want) {
			t.Errorf("the ready line lacks %q:\n%s", want, s.log)
		}
	}
	var health struct{ Status, Clock string }
	if code := get(t, s.root+"/_mock/health", &health); code != http.StatusOK || health.Status != "ok" || health.Clock != "manual" {
		t.Errorf("GET /_mock/health: %d %+v, want 200 ok manual", code, health)
	}
	var assets struct {
		Data []struct {
			URL         string `json:"url"`
			DownloadURL string `json:"download_url"`
		} `json:"data"`
	}
	if code := get(t, s.root+"/api/v1/assets", &assets); code != http.StatusOK {
		t.Fatalf("GET /api/v1/assets: %d", code)
	}
	urls := 0
	for _, a := range assets.Data {
		for _, u := range []string{a.URL, a.DownloadURL} {
			if u == "" {
				continue
			}
			urls++
			if !strings.HasPrefix(u, "http://mock.internal:8080/") {
				t.Errorf("asset URL %q does not start with MOCKSERVER_PUBLIC_URL", u)
			}
		}
	}
	if urls == 0 {
		t.Error("GET /api/v1/assets returned no URL to check")
	}

	if code := s.stop(t); code != 0 {
		t.Fatalf("exit code %d after the context ended, want 0; log:\n%s", code, s.log)
	}
	if !strings.Contains(s.log.String(), "msg=stopped") {
		t.Errorf("no 'stopped' line:\n%s", s.log)
	}
	if _, err := os.Stat(env["MOCKSERVER_DB"]); err != nil {
		t.Fatalf("MOCKSERVER_DB was not used: %v", err)
	}

	// The state file was closed: a new run opens it.
	again := startServer(t, env)
	var account struct {
		WorkspaceName string `json:"workspace_name"`
	}
	if code := get(t, again.root+"/api/v1/account", &account); code != http.StatusOK || account.WorkspaceName == "" {
		t.Errorf("GET /api/v1/account after reopening: %d %+v", code, account)
	}
	if code := again.stop(t); code != 0 {
		t.Fatalf("exit code %d, want 0; log:\n%s", code, again.log)
	}
}

func TestRunHealth(t *testing.T) {
	s := startServer(t, containerEnv(t))
	_, port, _ := strings.Cut(s.addr, ":")

	health := func(args []string, env fakeEnv) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"health"}, args...), env.get, nil, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	// As the image's HEALTHCHECK runs it: the URL comes from MOCKSERVER_ADDR,
	// 0.0.0.0 standing for 127.0.0.1.
	if code, out, errs := health(nil, fakeEnv{"MOCKSERVER_ADDR": "0.0.0.0:" + port}); code != 0 || !strings.HasPrefix(out, "healthy:") {
		t.Errorf("health from MOCKSERVER_ADDR=0.0.0.0:%s: exit %d, stdout %q, stderr %q; want 0 and healthy", port, code, out, errs)
	}
	if code, out, errs := health([]string{"--url", s.root}, nil); code != 0 || !strings.HasPrefix(out, "healthy:") {
		t.Errorf("health --url %s: exit %d, stdout %q, stderr %q; want 0 and healthy", s.root, code, out, errs)
	}

	if code := s.stop(t); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	// Nothing listens on the port any more.
	if code, _, errs := health(nil, fakeEnv{"MOCKSERVER_ADDR": s.addr}); code != 1 || !strings.HasPrefix(errs, "unhealthy:") {
		t.Errorf("health against a stopped server: exit %d, stderr %q; want 1 and unhealthy", code, errs)
	}

	// A server that is stopping answers 503.
	stopping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"status":"stopping"}`, http.StatusServiceUnavailable)
	}))
	defer stopping.Close()
	if code, _, errs := health([]string{"--url", stopping.URL}, nil); code != 1 || !strings.Contains(errs, "503") {
		t.Errorf("health against a 503: exit %d, stderr %q; want 1 and the status", code, errs)
	}

	if code, _, _ := health([]string{"--no-such-flag"}, nil); code != 2 {
		t.Errorf("health --no-such-flag: exit %d, want 2", code)
	}
}

func TestRunBadSettings(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  fakeEnv
		key  string // the setting the message must name
	}{
		{"clock env", nil, fakeEnv{"MOCKSERVER_CLOCK": "sideways"}, "clock"},
		{"clock flag", []string{"--clock", "sideways"}, nil, "clock"},
		{"speed not a number", nil, fakeEnv{"MOCKSERVER_SPEED": "fast"}, "speed"},
		{"speed zero", nil, fakeEnv{"MOCKSERVER_SPEED": "0"}, "speed"},
		{"seed negative", nil, fakeEnv{"MOCKSERVER_SEED": "-1"}, "seed"},
		{"durable", nil, fakeEnv{"MOCKSERVER_DURABLE": "maybe"}, "durable"},
		{"start time", nil, fakeEnv{"MOCKSERVER_START_TIME": "yesterday"}, "start-time"},
		{"public url", nil, fakeEnv{"MOCKSERVER_PUBLIC_URL": "mock.internal:8080"}, "public-url"},
		{"max body", nil, fakeEnv{"MOCKSERVER_MAX_BODY_BYTES": "0"}, "max-body-bytes"},
		{"log format", nil, fakeEnv{"MOCKSERVER_LOG_FORMAT": "xml"}, "log-format"},
		{"shutdown timeout", nil, fakeEnv{"MOCKSERVER_SHUTDOWN_TIMEOUT": "soon"}, "shutdown-timeout"},
		{"fetch images", nil, fakeEnv{"MOCKSERVER_FETCH_IMAGES": "maybe"}, "fetch-images"},
		{"journal size", nil, fakeEnv{"MOCKSERVER_JOURNAL_SIZE": "-1"}, "journal-size"},
		{"argument", []string{"serve"}, nil, "serve"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "mediamock.db")
			env := fakeEnv{"MOCKSERVER_ADDR": "127.0.0.1:0", "MOCKSERVER_DB": db}
			for k, v := range c.env {
				env[k] = v
			}
			// An ended context: were the setting accepted by mistake, Run
			// would start and stop at once (exit 0) instead of blocking.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr bytes.Buffer
			code := Run(ctx, c.args, env.get, nil, &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit code %d, want 2; stderr:\n%s", code, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") || !strings.HasPrefix(msg, "mockserver: ") {
				t.Errorf("stderr %q, want one line starting with \"mockserver: \"", msg)
			}
			if norm := strings.ReplaceAll(strings.ToLower(msg), "_", "-"); !strings.Contains(norm, c.key) {
				t.Errorf("stderr %q does not name %s", msg, c.key)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("a bad setting created the state file (%v)", err)
			}
		})
	}
}

func TestRunVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version", "-v"} {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), []string{arg}, fakeEnv{}.get, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("mockserver %s: exit code %d, want 0", arg, code)
		}
		if want := fmt.Sprintf("mockserver %s\n", version); stdout.String() != want || stderr.Len() > 0 {
			t.Errorf("mockserver %s: stdout %q, stderr %q, want %q alone", arg, stdout.String(), stderr.String(), want)
		}
	}
}

func TestRunFlagsWinOverEnvironment(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mediamock.db")
	env := fakeEnv{"MOCKSERVER_ADDR": "127.0.0.1:0", "MOCKSERVER_DB": db, "MOCKSERVER_SPEED": "fast", "MOCKSERVER_CLOCK": "sideways"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // start and stop at once
	var stdout, stderr bytes.Buffer
	if code := Run(ctx, []string{"--speed", "2", "--clock", "manual"}, env.get, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, want 0: the flags override the bad variables; stderr:\n%s", code, stderr.String())
	}
	var stderr2 bytes.Buffer
	Run(ctx, nil, fakeEnv{"MOCKSERVER_DB": db, "MOCKSERVER_CLOCK": "sideways"}.get, nil, &stdout, &stderr2)
	if !strings.Contains(stderr2.String(), "MOCKSERVER_CLOCK") {
		t.Errorf("stderr %q should name the variable the bad value came from", stderr2.String())
	}
}

func TestRunBrokenFixtureStopsWithOneLine(t *testing.T) {
	dir := t.TempDir()
	fixture := filepath.Join(dir, "world.json")
	if err := os.WriteFile(fixture, []byte(`{"extends": "default", "workspaces": [{"plan": "gold"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "mediamock.db")
	env := fakeEnv{"MOCKSERVER_ADDR": "127.0.0.1:0", "MOCKSERVER_DB": db, "MOCKSERVER_FIXTURES": fixture}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), nil, env.get, nil, &stdout, &stderr)
	if code == 0 {
		t.Fatal("a broken fixture must stop the server")
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, fixture) || !strings.Contains(msg, "$.workspaces[0].plan") || !strings.Contains(msg, `unknown plan "gold"`) {
		t.Errorf("stderr %q, want one line with the file, the JSON path and the reason", msg)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("nothing may half-load: the state file exists (%v)", err)
	}
}

// A stop (SIGTERM, Ctrl-C) while the fixtures are made or the state file
// seeded ends the command at once, with 0 and a line that says so; a seed
// cut short is redone at the next start.
func TestRunStoppedWhileStarting(t *testing.T) {
	dir := t.TempDir()
	fixture := filepath.Join(dir, "world.json")
	if err := os.WriteFile(fixture, []byte(`{"extends": "default", "workspaces": [{"name": "Big", "plan": "business", "assets": {"count": 50000}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := fakeEnv{"MOCKSERVER_ADDR": "127.0.0.1:0", "MOCKSERVER_DB": filepath.Join(dir, "mediamock.db"), "MOCKSERVER_FIXTURES": fixture}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came before the state was made
	var stdout, stderr bytes.Buffer
	if code := Run(ctx, nil, env.get, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, want 0; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped while starting") || strings.Contains(stderr.String(), "mediamock ready") {
		t.Errorf("stderr %q, want the stop said and no server", stderr.String())
	}
}

// The health check finds a server started with --addr, not the variable:
// the server writes the address it bound beside its state file.
func TestHealthFollowsTheAddressFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	s := startServer(t, fakeEnv{}, "--addr", "127.0.0.1:0", "--db", db)
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"health"}, fakeEnv{"MOCKSERVER_DB": db}.get, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("health with MOCKSERVER_DB: exit %d, %s", code, stderr.String())
	}
	stdout.Reset()
	if code := Run(context.Background(), []string{"health", "--db", db}, fakeEnv{}.get, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("health --db: exit %d, %s", code, stderr.String())
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if _, err := os.Stat(db + ".addr"); !os.IsNotExist(err) {
		t.Errorf("the address file outlives the server: %v", err)
	}
}

// An explicit MOCKSERVER_ADDR wins over an address file left behind by a
// server that was killed (it could not remove it); without the variable,
// the file is used, stale or not. A listen address without a host, or with
// an unspecified one, is dialled on loopback.
func TestHealthPrefersTheVariableOverAStaleAddressFile(t *testing.T) {
	s := startServer(t, containerEnv(t))
	_, port, _ := strings.Cut(s.addr, ":")
	db := filepath.Join(t.TempDir(), "state.db")
	// Port 1 on loopback: nothing listens there.
	if err := os.WriteFile(db+".addr", []byte("http://127.0.0.1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	health := func(env fakeEnv) (int, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), []string{"health"}, env.get, nil, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	for _, addr := range []string{s.addr, "0.0.0.0:" + port, ":" + port} {
		if code, out := health(fakeEnv{"MOCKSERVER_DB": db, "MOCKSERVER_ADDR": addr}); code != 0 {
			t.Errorf("MOCKSERVER_ADDR=%s beside a stale address file: exit %d, %s; want 0", addr, code, out)
		}
	}
	if code, out := health(fakeEnv{"MOCKSERVER_DB": db}); code != 1 || !strings.Contains(out, "127.0.0.1:1") {
		t.Errorf("only the stale address file: exit %d, %s; want 1 naming 127.0.0.1:1", code, out)
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestRunKeysAndHelp(t *testing.T) {
	var out, errs bytes.Buffer
	if code := Run(context.Background(), []string{"keys"}, fakeEnv{}.get, nil, &out, &errs); code != 0 {
		t.Fatalf("keys: exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"mk_test_all_scopes", "oat_test_acme_scheduler", "Pixel Garage", "read generate publish"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("keys lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	errs.Reset()
	if code := Run(context.Background(), []string{"--help"}, fakeEnv{}.get, nil, &out, &errs); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, want := range []string{"mockserver mcp", "mockserver keys", "mockserver health", "mockserver version", "MOCKSERVER_ADDR", "MOCKSERVER_LOG_LEVEL"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q on stdout", want)
		}
	}
	if errs.Len() != 0 {
		t.Errorf("--help writes to stdout only; stderr got %q", errs.String())
	}
}

// --help of every command goes to stdout with exit 0; a bad flag is one
// line and a hint, not the usage; an unknown command names every command.
func TestCommandLineErrors(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errs strings.Builder
		code := Run(context.Background(), args, fakeEnv{}.get, strings.NewReader(""), &out, &errs)
		return code, out.String(), errs.String()
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"keys", "--help"}, {"health", "--help"}, {"proxy", "--help"}, {"mcp", "--help"}} {
		code, out, errs := run(args...)
		if code != 0 || !strings.Contains(out, "Usage") || errs != "" {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q", args, code, len(out), errs)
		}
	}
	for _, args := range [][]string{{"--bogus"}, {"keys", "--bogus"}, {"health", "--bogus"}, {"proxy", "--bogus"}, {"mcp", "--bogus"}} {
		code, out, errs := run(args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if code != 2 || out != "" || len(lines) != 2 || !strings.Contains(lines[0], "-bogus") || !strings.Contains(lines[1], "--help") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want exit 2 and two lines, the error and a hint", args, code, out, errs)
		}
	}
	code, _, errs := run("frob")
	if code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	for _, cmd := range []string{"mcp", "keys", "proxy", "health", "version"} {
		if !strings.Contains(errs, cmd) {
			t.Errorf("the unknown command's error lacks %q: %s", cmd, errs)
		}
	}
}

// With --tls the command serves https, prints where the authority is, and
// its health check trusts it, by the address file or by MOCKSERVER_ADDR
// with MOCKSERVER_TLS.
func TestRunTLS(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	s := startServer(t, fakeEnv{}, "--addr", "127.0.0.1:0", "--db", db, "--tls")
	ca := filepath.Join(filepath.Dir(db), "state.db.tls", "ca.pem")
	if !strings.Contains(s.log.String(), "ca="+ca) {
		t.Errorf("the start does not print the authority's path %s:\n%s", ca, s.log)
	}
	if _, err := os.Stat(ca); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(s.root, "https://")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"health", "--db", db}, fakeEnv{}.get, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("health by the address file: exit %d, %s", code, stderr.String())
	}
	if code := Run(context.Background(), []string{"health"}, fakeEnv{"MOCKSERVER_ADDR": addr, "MOCKSERVER_TLS": "true", "MOCKSERVER_DB": db}.get, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("health by MOCKSERVER_ADDR and MOCKSERVER_TLS: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := Run(context.Background(), []string{"health", "--url", s.root, "--db", filepath.Join(t.TempDir(), "other.db")}, fakeEnv{}.get, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("health without the authority: exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "certificate") {
		t.Errorf("health without the authority says why: %s", stderr.String())
	}
}

// TestRunExitsWithParent: with --exit-with-parent the server stops, as on
// SIGTERM, when its standard input ends (the parent that held it is gone).
func TestRunExitsWithParent(t *testing.T) {
	in, parent := io.Pipe()
	log := newLogSink()
	exit := make(chan int, 1)
	db := filepath.Join(t.TempDir(), "mediamock.db")
	go func() {
		exit <- Run(context.Background(), []string{"--addr", "127.0.0.1:0", "--db", db, "--exit-with-parent"}, fakeEnv{}.get, in, io.Discard, log)
	}()
	select {
	case <-log.ready:
	case code := <-exit:
		t.Fatalf("exit %d before ready:\n%s", code, log)
	case <-time.After(testkit.Bound):
		t.Fatalf("not ready:\n%s", log)
	}
	parent.Close() // the parent dies: the system closes its end of the pipe
	select {
	case code := <-exit:
		if code != 0 || !strings.Contains(log.String(), "standard input ended") || !strings.Contains(log.String(), "msg=stopped") {
			t.Errorf("exit %d; log:\n%s", code, log)
		}
	case <-time.After(testkit.Bound):
		t.Fatalf("still running after standard input ended:\n%s", log)
	}
	if _, err := os.Stat(db + ".addr"); !os.IsNotExist(err) {
		t.Errorf("the address file stays: %v", err)
	}
}

// mockserver help [command] is the command's --help; help alone is the
// serve command's; an unknown command is a usage error.
func TestRunHelpCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "Usage: mockserver [flags]"},
		{[]string{"help", "proxy"}, "Usage of mockserver proxy"},
		{[]string{"help", "fixtures", "timing"}, "--recording"},
		{[]string{"help", "keys"}, "-fixtures"},
	} {
		var out, errs bytes.Buffer
		code := Run(context.Background(), tc.args, fakeEnv{}.get, nil, &out, &errs)
		if code != 0 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: exit %d, stdout lacks %q:\n%s%s", tc.args, code, tc.want, out.String(), errs.String())
		}
	}
	var out, errs bytes.Buffer
	if code := Run(context.Background(), []string{"help", "nope"}, fakeEnv{}.get, nil, &out, &errs); code != 2 || !strings.Contains(errs.String(), `unknown command "nope"`) {
		t.Errorf("help nope: exit %d, stderr %q", code, errs.String())
	}
}

// A busy port stops the start with a line that names the port, and leaves
// no state file, address file or TLS folder behind.
func TestRunBusyPortLeavesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	env := fakeEnv{"MOCKSERVER_ADDR": busy.Addr().String(), "MOCKSERVER_DB": filepath.Join(dir, "mediamock.db"), "MOCKSERVER_TLS": "true"}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), nil, env.get, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d on a busy port, want 1: %s", code, stderr.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, busy.Addr().String()) || !strings.Contains(msg, "address already in use") {
		t.Errorf("stderr %q does not name the busy port", msg)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("a failed start left %s behind", e.Name())
	}
}
